"""IaC over ACP: iac_check's tool call (locations, rawOutput), /check, infrastructure changes asked every
time with once-only options, plan mode, and the workspace's infrastructure in the system prompt."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import select, updates
from tests.processes import gone_within

from iac_code.agent.policy import PERMISSION_DENIED, PLAN_MODE_REFUSAL

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "iac"
APPLY = "./terraform apply -auto-approve"  # a stand-in terraform: what it "applies" lands in applied.log
FAKE_TERRAFORM = '#!/bin/sh\necho "$@" >> applied.log\n'


@pytest.fixture
def infra(workspace: Path) -> Path:
    """A workspace with a Terraform syntax error and a privileged pod, and a stand-in `./terraform`."""
    shutil.copytree(FIXTURES / "terraform" / "syntax_error", workspace / "network")
    shutil.copytree(FIXTURES / "kubernetes", workspace / "k8s")
    terraform = workspace / "terraform"
    terraform.write_text(FAKE_TERRAFORM)
    terraform.chmod(0o755)
    return workspace


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def system_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def finished(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]


def permission_requests(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"] for m in seen if m.get("method") == "session/request_permission"]


def assert_contract(update: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """iac_check's rawOutput and locations as the issue's output contract states them."""
    raw = update["rawOutput"]
    assert set(raw) == {"findings", "ran", "skipped", "files"}
    for finding in raw["findings"]:
        assert set(finding) == {"tool", "rule", "severity", "file", "line", "message"}
        assert finding["severity"] in ("error", "warning", "info")
        assert not Path(finding["file"]).is_absolute() and (workspace / finding["file"]).is_file()
        assert finding["line"] is None or finding["line"] >= 1
    assert all(set(s) == {"tool", "reason"} and s["reason"] for s in raw["skipped"])
    assert 0 < len(update["locations"]) <= 50
    for location in update["locations"]:
        assert Path(location["path"]).is_absolute() and Path(location["path"]).is_file()
    return raw


def test_iac_check_tool_call_carries_findings_as_locations_and_raw_output(agent, model, infra):
    model.add({"tool_calls": [{"name": "iac_check", "arguments": {"path": "."}}]}, {"text": "two problems"})
    session_id = agent.new_session(infra)
    response, seen = agent.prompt(session_id, "check my infrastructure")  # read-only: never asks
    assert response["result"]["stopReason"] == "end_turn"
    (start,) = updates(seen, "tool_call")
    assert (start["title"], start["kind"], start["rawInput"]) == ("Check infrastructure code", "search", {"path": "."})
    (done,) = finished(seen)
    assert done["status"] == "completed"
    raw = assert_contract(done, infra)
    assert raw["files"] == 3
    assert {"hcl-syntax", "checkov"} <= set(raw["ran"])
    found = {(f["tool"], f["rule"], f["file"], f["line"], f["severity"]) for f in raw["findings"]}
    assert ("hcl-syntax", "hcl-syntax", "network/main.tf", 8, "error") in found
    assert ("checkov", "CKV_K8S_16", "k8s/privileged.yaml", 6, "error") in found
    assert {"path": str(infra / "network" / "main.tf"), "line": 8} in done["locations"]
    (text,) = tool_results(model)  # the model's view: compact, grouped by file
    assert "network/main.tf" in text and "line 8" in text


def test_check_command_runs_iac_check_without_the_model_and_the_model_sees_it_next(agent, model, infra):
    session_id = agent.new_session(infra)
    response, seen = agent.prompt(session_id, "/check")
    assert response["result"]["stopReason"] == "end_turn"
    assert model.requests == []  # /check is the user's own call: no model turn
    (start,) = updates(seen, "tool_call")
    assert start["rawInput"] == {"path": "."} and start["kind"] == "search"
    (done,) = finished(seen)
    assert done["toolCallId"] == start["toolCallId"] and done["status"] == "completed"
    assert_contract(done, infra)

    model.add({"text": "I will fix line 8."})
    agent.prompt(session_id, "fix what it found")
    history = model.requests[-1]["messages"]
    (call,) = [m for m in history if m.get("tool_calls")]
    assert call["tool_calls"][0]["function"]["name"] == "iac_check"
    assert "network/main.tf" in tool_results(model)[0]


def test_an_infrastructure_change_is_asked_every_time_even_after_allow_always_for_bash(agent, model, infra):
    session_id = agent.new_session(infra)
    model.add(bash("echo plain"), {"text": "ok"})
    agent.prompt(session_id, "run it", select("allow_always"))  # bash is now always allowed

    model.add(bash("echo again"), {"text": "ok"})
    _, seen = agent.prompt(session_id, "run it again")  # remembered: any request fails this call
    assert permission_requests(seen) == []

    model.add(bash(APPLY), {"text": "not applied"})
    _, seen = agent.prompt(session_id, "apply", select("reject_once"))
    (asked,) = permission_requests(seen)
    assert [(o["optionId"], o["kind"]) for o in asked["options"]] == [
        ("allow_once", "allow_once"),
        ("reject_once", "reject_once"),
    ]
    call = asked["toolCall"]
    assert call["title"].startswith("Infrastructure change: ")
    assert call["rawInput"] == {"command": APPLY, "infrastructureChange": True}
    (start,) = updates(seen, "tool_call")
    assert start["toolCallId"] == call["toolCallId"] and "infrastructureChange" not in start["rawInput"]
    assert tool_results(model)[-1] == PERMISSION_DENIED
    assert not (infra / "applied.log").exists()

    for attempt in (1, 2):  # allow_once is not remembered: asked again, each time
        model.add(bash(APPLY), {"text": "applied"})
        _, seen = agent.prompt(session_id, "apply now", select("allow_once"))
        assert len(permission_requests(seen)) == 1
        assert (infra / "applied.log").read_text().splitlines() == ["apply -auto-approve"] * attempt


def test_bypass_mode_runs_commands_but_still_asks_infrastructure_changes(agent, model, infra):
    session_id = agent.new_session(infra)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(bash("echo plain > plain.txt"), bash(APPLY), {"text": "done"})
    _, seen = agent.prompt(session_id, "run both", select("reject_once"))
    (asked,) = permission_requests(seen)
    assert asked["toolCall"]["rawInput"]["command"] == APPLY
    assert [o["optionId"] for o in asked["options"]] == ["allow_once", "reject_once"]
    assert (infra / "plain.txt").exists() and not (infra / "applied.log").exists()


def test_plan_mode_refuses_changes_runs_checks_and_asks_for_a_plan(agent, model, infra):
    session_id = agent.new_session(infra)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
    write = {"name": "write_file", "arguments": {"path": "new.tf", "content": "locals {}\n"}}
    edit = {"name": "edit_file", "arguments": {"path": "network/main.tf", "old_string": "= =", "new_string": "="}}
    check = {"name": "iac_check", "arguments": {"path": "network", "checks": ["hcl-syntax"]}}
    apply = {"name": "bash", "arguments": {"command": APPLY}}
    model.add({"tool_calls": [write, edit, check, apply]}, {"text": "Plan: 1. fix line 8"})
    response, seen = agent.prompt(session_id, "fix the network module")  # no question: any request fails this
    assert response["result"]["stopReason"] == "end_turn"
    write_result, edit_result, check_result, apply_result = tool_results(model)
    assert write_result == edit_result == apply_result == PLAN_MODE_REFUSAL
    assert "network/main.tf" in check_result and "line 8" in check_result
    assert [u["status"] for u in finished(seen)] == ["failed", "failed", "completed", "failed"]
    assert not (infra / "new.tf").exists() and not (infra / "applied.log").exists()
    assert "= =" in (infra / "network" / "main.tf").read_text()
    assert "plan mode" in system_prompt(model.requests[0]) and "Plan" in system_prompt(model.requests[0])

    model.add(bash("echo looked > looked.txt"), {"text": "ok"})  # other commands are asked as usual
    _, seen = agent.prompt(session_id, "look around", select("allow_once"))
    assert len(permission_requests(seen)) == 1 and (infra / "looked.txt").exists()

    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "default"})
    model.add({"text": "back to work"})
    agent.prompt(session_id, "carry on")
    assert "plan mode" not in system_prompt(model.requests[-1])  # the change counts from the next call


def test_the_workspace_infrastructure_is_in_the_system_prompt(agent, model, infra, tmp_path):
    model.add({"text": "seen"}, {"text": "nothing here"})
    agent.prompt(agent.new_session(infra), "what is here?")
    prompt = system_prompt(model.requests[0])
    assert "Infrastructure found in the workspace" in prompt
    assert "- network: local state" in prompt and "k8s: 2 files (Deployment, Namespace, Pod)" in prompt

    empty = tmp_path / "empty"
    empty.mkdir()
    agent.prompt(agent.new_session(empty), "what is here?")
    assert "Infrastructure found" not in system_prompt(model.requests[1])


def worker_pids(parent: int) -> set[int]:
    """The agent's iac_check workers: its children running worker_server.py."""
    pids = set()
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"worker_server.py" in (proc / "cmdline").read_bytes():
                pids.add(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue  # not a process, or gone meanwhile
    return pids


def test_a_session_on_infrastructure_warms_the_checkers_and_they_leave_with_the_agent(spawn, infra):
    agent = spawn()
    agent.new_session(infra)  # no prompt yet: cfn-lint's and checkov's workers start in the background
    deadline = time.monotonic() + 60
    while len(pids := worker_pids(agent.proc.pid)) < 2:
        assert time.monotonic() < deadline, "the checkers' workers never started"
        time.sleep(0.05)
    assert agent.close() == 0  # at once, even while checkov may still be importing
    assert all(gone_within(pid, 5) for pid in pids)
