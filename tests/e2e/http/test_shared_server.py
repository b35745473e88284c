"""A shared server keeps its principals to what the operator allows (issue 37), on one real server with a tokens
file: bob's client-sent MCP servers do not run commands or reach addresses the operator did not list (and an
allowed start is in the audit trail), a principal opens sessions only under its workspace roots and never in
the config dir, and a project's trust is each principal's own."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.http.client import agent_text, is_response
from tests.e2e.http.server_process import http_server, model_env
from tests.e2e.http.test_principals import Client, add_token
from tests.loopback import anything_connected, silent_listener
from tests.processes import within

from iac_code.agent.audit import arguments_digest

PYTHON = os.path.normpath(sys.executable)  # the one command the operator allows client MCP servers to run


@pytest.fixture
def config(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    config.mkdir()
    return config


@pytest.fixture
def tokens(config: Path) -> dict[str, str]:
    """alice, bob and root (an admin) in the config dir's tokens file."""
    return {
        name: add_token(config / "tokens.json", name, *extra)
        for name, *extra in [["alice"], ["bob"], ["root", "--admin"]]
    }


def serve(model: Any, config: Path, settings: dict[str, Any] | None = None) -> Any:
    (config / "config.json").write_text(json.dumps(settings or {}))
    return http_server(model.url, env={"IAC_CODE_CONFIG_DIR": str(config)})


def new_session(client: Client, cwd: Path, servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return client.request("session/new", {"cwd": str(cwd), "mcpServers": servers or []})


def stdio_server(name: str, command: str, *args: str) -> dict[str, Any]:
    return {"name": name, "command": command, "args": list(args), "env": []}


def audit_rows(config: Path, model: Any) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "audit", "--json"],
        env={**os.environ, **model_env(model.url, config)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback service the test runs (an 'internal admin' endpoint): it tells whether anything connected."""
    with silent_listener() as server:
        yield server


def test_client_mcp_servers_run_and_reach_only_what_the_operator_allows(model, config, tokens, tmp_path, listener):
    with serve(model, config, {"client_mcp_commands": [PYTHON]}) as server:
        bob, root = Client(server.url, tokens["bob"]), Client(server.url, tokens["root"])
        cwd = server.workspace

        # bob's shell: refused, named, and nothing ran (no session either)
        marker = tmp_path / "bob-ran-a-shell"
        refused = new_session(bob, cwd, [stdio_server("pwn", "/bin/sh", "-c", f"touch {marker}")])["error"]
        assert refused["code"] == -32602
        assert refused["data"]["mcpServers"].startswith("MCP server 'pwn' refused: its command /bin/sh is not in")
        own = new_session(bob, cwd)["result"]["sessionId"]
        for method in ("session/resume", "session/load", "session/fork"):
            params = {
                "sessionId": own,
                "cwd": str(cwd),
                "mcpServers": [stdio_server("pwn", "sh", "-c", f"touch {marker}")],
            }
            assert bob.request(method, params)["error"]["code"] == -32602, method
        assert bob.listed() == {own}

        # bob's http server pointed at the server's own network: refused before any request leaves
        port = listener.getsockname()[1]
        for url, why in [
            (f"http://127.0.0.1:{port}/internal-admin", "loopback"),
            (f"http://localhost:{port}/internal-admin", "loopback"),
            ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
            ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata"),
            ("http://10.0.0.7/", "private"),
        ]:
            server_entry = {
                "type": "http",
                "name": "internal",
                "url": url,
                "headers": [{"name": "X-Who", "value": "bob"}],
            }
            error = new_session(bob, cwd, [server_entry])["error"]
            assert error["code"] == -32602 and error["data"]["mcpServers"].startswith("MCP server 'internal' refused")
            assert why in error["data"]["mcpServers"], error

        # the allowed command runs, by its path, recorded with bob's name and argv before it started
        started = tmp_path / "allowed-server-started"
        script = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"
        allowed = stdio_server("tool", PYTHON, "-c", script, str(started))
        bobs = new_session(bob, cwd, [allowed])["result"]["sessionId"]
        assert within(30, started.exists)

        # an admin is the operator's own: its shell runs, and is recorded too
        admins_marker = tmp_path / "root-ran-a-shell"
        roots = new_session(root, cwd, [stdio_server("sh", "/bin/sh", "-c", f"touch {admins_marker}")])["result"]
        assert within(30, admins_marker.exists)
        for client in (bob, root):
            client.close()
        assert not marker.exists()
        assert not anything_connected(listener)

    starts = [row for row in audit_rows(config, model) if row["tool"] == "mcp_server"]
    argv = [PYTHON, "-c", script, str(started)]
    assert [(r["principal"], r["session"], r["decision"], r["source"], r["digest"]) for r in starts] == [
        ("bob", bobs, "allowed", "config:client_mcp_commands", arguments_digest({"server": "tool", "argv": argv})),
        (
            "root",
            roots["sessionId"],
            "allowed",
            "admin",
            arguments_digest({"server": "sh", "argv": ["/bin/sh", "-c", f"touch {admins_marker}"]}),
        ),
    ]


def test_principals_open_sessions_only_under_their_roots_and_never_in_the_config_dir(model, config, tokens, tmp_path):
    for directory in ("alice", "team/app", "elsewhere"):
        (tmp_path / directory).mkdir(parents=True)
    roots = {"alice": [str(tmp_path / "alice")], "*": [str(tmp_path / "team")]}
    with serve(model, config, {"workspace_roots": roots}) as server:
        alice, bob, root = (Client(server.url, tokens[name]) for name in ("alice", "bob", "root"))
        for client, cwd in [(alice, "alice"), (bob, "team/app"), (root, "elsewhere"), (root, "alice")]:
            assert "sessionId" in new_session(client, tmp_path / cwd)["result"], (client, cwd)
        for client, name, cwd in [(alice, "alice", "team"), (bob, "bob", "alice"), (bob, "bob", "elsewhere")]:
            error = new_session(client, tmp_path / cwd)["error"]
            assert error["code"] == -32602 and f"outside the workspaces {name} may open" in error["data"]["cwd"]
        for client in (alice, root):
            error = new_session(client, config)["error"]
            assert error["code"] == -32602 and "inside the agent's own state" in error["data"]["cwd"]
        hers = next(iter(alice.listed()))
        for method in ("session/load", "session/resume", "session/fork"):
            params = {"sessionId": hers, "cwd": str(tmp_path / "team"), "mcpServers": []}
            error = alice.request(method, params)["error"]
            assert error["code"] == -32602 and "outside the workspaces alice may open" in error["data"]["cwd"], method
        for client in (alice, bob, root):
            client.close()


def permissions(client: Client, session_id: str, text: str) -> str:
    client.next_id += 1
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    response = client.acp.post({"jsonrpc": "2.0", "id": client.next_id, "method": "session/prompt", "params": prompt})
    assert response.status_code == 202
    return agent_text(client.stream.until(is_response(client.next_id)))


def test_a_projects_trust_is_each_principals_own(model, config, tokens, tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".iac-code").mkdir()
    (project / ".iac-code" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(echo *)"]}}))
    with serve(model, config) as server:
        alice, bob = Client(server.url, tokens["alice"]), Client(server.url, tokens["bob"])
        bobs = new_session(bob, project)["result"]["sessionId"]
        assert "Project: trusted" in permissions(bob, bobs, "/permissions trust")
        hers = new_session(alice, project)["result"]["sessionId"]
        shown = permissions(alice, hers, "/permissions")
        assert "Project: not trusted" in shown and '"Bash(echo *)"' in shown
        bobs_next = new_session(bob, project)["result"]["sessionId"]
        assert "Project: trusted" in permissions(bob, bobs_next, "/permissions")
        for client in (alice, bob):
            client.close()
    assert not (config / "trusted-projects.json").exists()  # the local user's trust is untouched
