"""Which MCP servers a client may start on a shared server: commands by the path exec would run, hosts by
every address they resolve to; the local user's list passes as sent."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from iac_code.config import Settings
from iac_code.mcp.client_servers import ClientServerRules, ServerRefused, resolved_command
from iac_code.mcp.config import HttpServer, InvalidServer, StdioServer
from iac_code.principals import LOCAL, Principal

SH = os.path.normpath(shutil.which("sh") or "/bin/sh")
ALICE, ROOT = Principal("alice"), Principal("root", admin=True)


def rules(tmp_path: Path, **settings: object) -> ClientServerRules:
    return ClientServerRules.from_settings(Settings(config_dir=tmp_path, **settings))  # type: ignore[arg-type]


def stdio(command: str, *args: str, env: list[dict[str, str]] | None = None) -> dict[str, object]:
    return {"name": "tools", "command": command, "args": list(args), "env": env or []}


async def test_the_local_users_servers_pass_as_sent(tmp_path):
    sent = [
        stdio("/bin/sh", "-c", "anything"),
        {"type": "http", "name": "w", "url": "http://127.0.0.1/", "headers": []},
    ]
    assert await rules(tmp_path).admitted(LOCAL, tmp_path, sent) == sent


async def test_a_principals_stdio_server_runs_only_an_allowed_command_by_its_path(tmp_path):
    with pytest.raises(ServerRefused, match="MCP server 'tools' refused: its command /bin/sh is not in"):
        await rules(tmp_path).admitted(ALICE, tmp_path, [stdio("/bin/sh", "-c", "id")])
    allowed = rules(tmp_path, client_mcp_commands=(SH,))
    [spec] = await allowed.admitted(ALICE, tmp_path, [stdio("sh", "-c", "id")])
    assert isinstance(spec, StdioServer) and (spec.command, spec.args) == (SH, ("-c", "id"))


async def test_a_path_the_client_controls_does_not_pass_for_an_allowed_command(tmp_path):
    (tmp_path / "bin").mkdir()
    planted = tmp_path / "bin" / "sh"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    allowed = rules(tmp_path, client_mcp_commands=(SH,))
    path_first = [{"name": "PATH", "value": f"{tmp_path / 'bin'}:/usr/bin:/bin"}]
    for spec in (stdio("sh", env=path_first), stdio("./bin/sh"), stdio("bin/../bin/sh")):
        with pytest.raises(ServerRefused, match=f"\\({planted}\\)"):
            await allowed.admitted(ALICE, tmp_path, [spec])
    assert resolved_command(StdioServer("x", "./bin/sh"), tmp_path) == str(planted)


async def test_an_admin_is_not_held_and_invalid_entries_are_left_to_be_reported(tmp_path):
    sent = [stdio("/bin/sh", "-c", "id"), {"name": "odd", "type": "carrier-pigeon"}]
    [shell, odd] = await rules(tmp_path).admitted(ROOT, tmp_path, sent)
    assert isinstance(shell, StdioServer) and shell.command == "/bin/sh"
    assert isinstance(odd, InvalidServer)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8811/internal-admin", "https://localhost/mcp", "http://[::1]:9/"])
async def test_a_principals_http_server_must_not_reach_the_servers_own_network(tmp_path, url):
    sent = [{"type": "http", "name": "internal", "url": url, "headers": []}]
    with pytest.raises(ServerRefused, match="MCP server 'internal' refused: .*loopback"):
        await rules(tmp_path).admitted(ALICE, tmp_path, sent)
    [spec] = await rules(tmp_path, client_mcp_networks=("127.0.0.0/8", "::1")).admitted(ALICE, tmp_path, sent)
    assert isinstance(spec, HttpServer) and spec.reach is not None  # every connection is judged again
