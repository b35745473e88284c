"""The audit trail over a full ACP session, on SQLite and on PostgreSQL: every permission decision is on
record before its call runs (a mode's run, the user's allow and reject, an "always" remembered, an
infrastructure apply with its plan's sha256 and counts, then its exit status), read back with
`iac-code audit --json`; a decision that cannot be recorded means the call does not run."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
from tests.e2e.acp.wire import model_env, updates
from tests.terraform_binary import applied_then_edited, require_terraform

APPLIED = 'resource "terraform_data" "db" { input = "v1" }\n'
EDITED = 'resource "terraform_data" "db" { input = "v2" }\nresource "terraform_data" "web" {}\n'


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def audit(env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "audit", "--json", *args], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def answer_by_command(request: dict[str, Any]) -> dict[str, Any]:
    """reject `echo no`, allow bash always at `ls`, allow the rest once."""
    command = request["params"]["toolCall"]["rawInput"].get("command", "")
    option = {"echo no": "reject_once", "ls": "allow_always"}.get(command, "allow_once")
    return {"outcome": {"outcome": "selected", "optionId": option}}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_decision_of_a_session_is_on_record(backend, spawn, model, workspace, tmp_path, request):
    require_terraform()
    env = {} if backend == "sqlite" else {"IAC_CODE_DATABASE_URL": request.getfixturevalue("pg_url")}
    net = applied_then_edited(workspace / "net", APPLIED, EDITED)
    (workspace / "notes.txt").write_text("hello\n")
    agent = spawn(**env)
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]})
    for command in ("echo hi", "echo no", "ls", "echo again DB_PASSWORD=hunter2", "terraform -chdir=net apply"):
        model.add(bash(command))
    model.add({"text": "done"})
    response, seen = agent.prompt(session_id, "work", on_permission=answer_by_command)
    assert response["result"]["stopReason"] == "end_turn"
    assert '"v2"' in (net / "terraform.tfstate").read_text()  # the apply ran
    (plan_request,) = [m for m in seen if m.get("method") == "session/request_permission" and "plan" in str(m)]
    plan = plan_request["params"]["toolCall"]["rawInput"]["plan"]

    records = audit(model_env(model.url, tmp_path / "config", **env), "--session", session_id)
    assert [(r["kind"], r["tool"], r["decision"], r["source"]) for r in records] == [
        ("decision", "read_file", "allowed", "mode:default"),
        ("decision", "bash", "allowed", "user:allow_once"),
        ("decision", "bash", "denied", "user:reject_once"),
        ("decision", "bash", "allowed", "user:allow_always"),
        ("decision", "bash", "allowed", "remembered"),
        ("decision", "bash", "allowed", "mode:default"),  # the apply line runs to make its plan
        ("decision", "bash", "allowed", "user:allow_once"),  # the reviewed plan's apply, asked
        ("outcome", "bash", "allowed", "user:allow_once"),
    ]
    assert all(r["principal"] == "local" and r["session"] == session_id for r in records)
    assert records[1]["arguments"] == '{"command":"echo hi"}'
    assert records[4]["arguments"] == '{"command":"echo again DB_PASSWORD=***"}'  # redacted
    assert all(len(r["digest"]) == 64 for r in records) and records[3]["digest"] != records[4]["digest"]
    applied, outcome = records[6], records[7]
    assert applied["plan_sha256"] == plan["sha256"] == outcome["plan_sha256"]
    assert applied["plan_counts"] == plan["counts"] and plan["counts"]["create"] == 1
    assert outcome["exit_status"] == 0 and applied["exit_status"] is None
    assert records[0]["time"] <= records[-1]["time"] and records[0]["time"].endswith("Z")


def test_a_decision_that_cannot_be_recorded_does_not_run(spawn, model, workspace, tmp_path):
    agent = spawn()
    session_id = agent.new_session(workspace)
    with sqlite3.connect(tmp_path / "config" / "iac-code.db") as conn:  # the disk fills up, say
        conn.execute("CREATE TRIGGER full BEFORE INSERT ON iac_audit BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    model.add(bash("touch made"), {"text": "could not"})
    response, seen = agent.prompt(session_id, "make it", on_permission=lambda r: _allow_once())
    assert response["result"]["stopReason"] == "end_turn"
    assert not (workspace / "made").exists()
    (failed,) = [u for u in updates(seen, "tool_call_update") if u.get("status") == "failed"]
    told = "".join(block["content"]["text"] for block in failed["content"] if block["type"] == "content")
    assert told.startswith("Not run: the audit trail could not be written (IntegrityError: disk full)")
    assert "audit trail could not be written" in json.dumps(model.requests[-1]["messages"][-1])


def _allow_once() -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def test_the_trail_survives_the_session(spawn, model, workspace, tmp_path):
    """Append-only: deleting the session leaves its records; the table refuses UPDATE and DELETE."""
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"text": "listed"})
    agent.prompt(session_id, "list")
    agent.result("session/delete", {"sessionId": session_id})
    database = tmp_path / "config" / "iac-code.db"
    with sqlite3.connect(database) as conn:
        for statement in ("UPDATE iac_audit SET decision = 'denied'", "DELETE FROM iac_audit"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(statement)
    env = model_env(model.url, tmp_path / "config")
    assert [r["decision"] for r in audit(env, "--session", session_id)] == ["allowed"]
