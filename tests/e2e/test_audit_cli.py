"""`iac-code audit [--session ID] [--since T] [--json]` as a subprocess: the trail a headless run wrote
(its flags' answers recorded as `headless-flag`) and records of other sessions, filtered and printed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI

from iac_code.sessions.audit import AuditRecord
from iac_code.sessions.sqlite import open_sqlite_store


def iac_code(workspace: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def write_call(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]}


def seed(database: Path, *records: AuditRecord) -> None:
    async def append() -> None:
        store = open_sqlite_store(database, durable=False)
        try:
            for record in records:
                await store.audit_trail().append(record)
        finally:
            await store.close()

    asyncio.run(append())


def record(session: str, tool: str, **extra: Any) -> AuditRecord:
    fields: dict[str, Any] = dict(
        kind="decision", principal="alice", session=session, tool=tool, digest="0" * 64,
        arguments='{"command":"ls"}', decision="allowed", source="rule:config.json:allow[0]",
    )  # fmt: skip
    return AuditRecord(**{**fields, **extra})


def test_headless_answers_are_recorded_as_its_flags_and_printed(workspace):
    with ScriptedOpenAI([write_call("a.tf"), {"text": "no"}, write_call("b.tf"), {"text": "yes"}]) as model:
        env = model_env(model.url, workspace.parent / "config")
        assert iac_code(workspace, env, "-p", "write a").returncode == 0
        assert iac_code(workspace, env, "-p", "write b", "--allow-tools", "write_file").returncode == 0
    assert not (workspace / "a.tf").exists() and (workspace / "b.tf").exists()

    printed = iac_code(workspace, env, "audit", "--json")
    assert printed.returncode == 0, printed.stderr
    records = [json.loads(line) for line in printed.stdout.splitlines()]
    assert [(r["session"], r["tool"], r["decision"], r["source"]) for r in records] == [
        ("headless", "write_file", "denied", "headless-flag"),
        ("headless", "write_file", "allowed", "headless-flag"),
    ]
    assert records[1]["arguments"] == '{"path":"b.tf","content":"x"}' and records[1]["principal"] == "local"
    assert {"time", "principal", "session", "tool", "arguments", "decision", "source"} <= records[0].keys()

    lines = iac_code(workspace, env, "audit").stdout.splitlines()
    assert len(lines) == 2 and lines[0].endswith(
        '  local  headless  denied  headless-flag  write_file  {"path":"a.tf","content":"x"}'
    )


def test_filters_by_session_and_time(tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    plan = {"plan_sha256": "ab" * 32, "plan_counts": {"create": 1, "delete": 2}}
    seed(
        config / "iac-code.db",
        record("one", "bash"),
        record("two", "bash", **plan),
        record("two", "bash", **plan, kind="outcome", exit_status=1),
    )
    env = model_env("http://127.0.0.1:9", config)

    two = iac_code(tmp_path, env, "audit", "--session", "two").stdout.splitlines()
    assert len(two) == 2 and all(
        "  alice  two  allowed  rule:config.json:allow[0]  bash  plan abababababab" in line for line in two
    )
    assert "(1 create, 2 delete)" in two[0] and two[1].endswith('ran: exit status 1  {"command":"ls"}')

    as_json = [
        json.loads(line) for line in iac_code(tmp_path, env, "audit", "--json", "--session", "one").stdout.splitlines()
    ]
    assert [(r["session"], r["plan_sha256"]) for r in as_json] == [("one", None)]

    assert iac_code(tmp_path, env, "audit", "--since", "2000-01-01").stdout.count("\n") == 3
    assert iac_code(tmp_path, env, "audit", "--since", "2999-01-01T00:00:00+02:00").stdout == ""
    bad = iac_code(tmp_path, env, "audit", "--since", "yesterday")
    assert bad.returncode == 2 and "--since yesterday: not an ISO 8601 date or time" in bad.stderr


def test_a_stored_field_cannot_forge_or_hide_lines_of_the_text(tmp_path):
    # Names from before the name rule, a client's session id, a model's arguments: none may start a line.
    config = tmp_path / "config"
    config.mkdir()
    forged = "\n2026-12-03T09:00:00Z  root  sess_1  allowed  rule:config.json:allow[0]  bash"
    seed(
        config / "iac-code.db",
        record("one\rtwo", "bash", principal=f"mallory{forged}", arguments='{"command":"ls\u2028\u202erm -rf /"}'),
    )
    printed = iac_code(tmp_path, model_env("http://127.0.0.1:9", config), "audit")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.count("\n") == 1 and "\r" not in printed.stdout
    assert "  mallory\\n2026-12-03T09:00:00Z  root  sess_1  allowed" in printed.stdout
    assert "  one\\rtwo  " in printed.stdout and "ls\\u2028\\u202erm -rf /" in printed.stdout


def test_headless_options_are_refused_with_audit(tmp_path):
    refused = iac_code(tmp_path, model_env("http://127.0.0.1:9", tmp_path / "config"), "--yes", "audit")
    assert refused.returncode == 2 and "which the audit command does not take" in refused.stderr


def test_a_headless_run_without_a_trail_does_not_start(workspace):
    config = workspace.parent / "config"
    (config / "iac-code.db").mkdir(parents=True)  # the database cannot be opened
    with ScriptedOpenAI([write_call("a.tf"), {"text": "written"}]) as model:
        result = iac_code(workspace, model_env(model.url, config), "-p", "write a", "--yes")
        assert result.returncode == 2 and model.requests == []
    assert result.stderr.startswith("iac-code: the audit trail cannot be written: cannot write sessions to ")
    assert not (workspace / "a.tf").exists()
