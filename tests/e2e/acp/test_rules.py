"""Permission rules over ACP, on a real `iac-code acp`: a project's deny rule refuses in bypass mode naming the
rule and its file; a user's allow rule skips the question, an untrusted project's does not until the user
trusts it (/permissions trust); a Plan rule refuses a bound apply that deletes; a bad rule fails session/new
(-32602, naming the file) and stops a server whose config.json holds one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import answer_text, model_env, select, updates
from tests.terraform_binary import applied_then_edited, require_terraform

APPLIED = 'resource "terraform_data" "old" {}\nresource "terraform_data" "kept" {}\n'
EDITED = 'resource "terraform_data" "kept" {}\n'


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def project_rules(workspace: Path, permissions: Any) -> Path:
    file = workspace / ".iac-code" / "settings.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"permissions": permissions}))
    return file.resolve()


def user_config(config_dir: Path, **settings: Any) -> Path:
    config_dir.mkdir(parents=True, exist_ok=True)
    file = config_dir / "config.json"
    file.write_text(json.dumps(settings))
    return file


def finished(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done


def result_text(update: dict[str, Any]) -> str:
    return "".join(b["content"]["text"] for b in update.get("content") or [] if b["type"] == "content")


def test_a_project_deny_rule_refuses_a_bash_call_in_bypass_mode_naming_the_rule(agent, model, workspace):
    file = project_rules(workspace, {"deny": ["Bash(rm *)"]})
    (workspace / "keep.txt").write_text("x")
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(bash("env X=1 bash -c 'ls && rm -f keep.txt'"), {"text": "refused"})
    response, seen = agent.prompt(session_id, "clean up")  # no permission request: none is expected
    assert response["result"]["stopReason"] == "end_turn"
    done = finished(seen)
    assert done["status"] == "failed"
    assert result_text(done) == f'Denied by rule "Bash(rm *)" in {file}'
    assert (workspace / "keep.txt").exists()
    assert model.requests[1]["messages"][-1]["content"] == f'Denied by rule "Bash(rm *)" in {file}'  # the model is told


def test_a_user_allow_rule_skips_the_question_in_default_mode(spawn, model, workspace, tmp_path):
    user_config(tmp_path / "config", permissions={"allow": ["Bash(touch *)"]})
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(bash("touch made"), {"text": "done"})
    _, seen = agent.prompt(session_id, "make it")  # no permission request: none is expected
    assert finished(seen)["status"] == "completed"
    assert (workspace / "made").exists()


def test_an_untrusted_projects_allow_rule_asks_until_the_user_trusts_it(spawn, model, workspace, tmp_path):
    file = project_rules(workspace, {"allow": ["Bash(*)"]})
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(bash("touch first"), {"text": "no"})
    _, seen = agent.prompt(session_id, "make it", on_permission=select("reject_once"))
    assert [m for m in seen if m.get("method") == "session/request_permission"]
    assert not (workspace / "first").exists()

    _, seen = agent.prompt(session_id, "/permissions")
    shown = answer_text(seen)
    assert f"Project: not trusted ({file})" in shown and '"Bash(*)"' in shown

    _, seen = agent.prompt(session_id, "/permissions trust")
    assert f'"Bash(*)" ({file})' in answer_text(seen) and "Project: trusted" in answer_text(seen)
    assert json.loads((tmp_path / "config" / "trusted-projects.json").read_text()) == {
        "projects": [str(workspace.resolve())]
    }
    model.add(bash("touch second"), {"text": "done"})
    _, seen = agent.prompt(session_id, "make it")  # trusted now: no question
    assert (workspace / "second").exists()
    other = agent.new_session(workspace)  # remembered for the workspace's next sessions
    model.add(bash("touch third"), {"text": "done"})
    agent.prompt(other, "make it")
    assert (workspace / "third").exists()


def test_a_plan_rule_refuses_a_bound_apply_that_deletes(spawn, model, workspace, tmp_path):
    require_terraform()
    net = applied_then_edited(workspace / "net", APPLIED, EDITED)
    serial = json.loads((net / "terraform.tfstate").read_text())["serial"]
    config = user_config(tmp_path / "config", permissions={"deny": ["Plan(delete terraform_data.*)"]})
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(bash("terraform -chdir=net apply -auto-approve"), {"text": "refused"})
    _, seen = agent.prompt(session_id, "apply net")  # refused before the question: none is expected
    done = finished(seen)
    assert done["status"] == "failed"
    assert result_text(done) == f'Denied by rule "Plan(delete terraform_data.*)" in {config}'
    assert json.loads((net / "terraform.tfstate").read_text())["serial"] == serial


def test_a_bad_project_rule_fails_session_new_naming_the_file(agent, workspace):
    file = project_rules(workspace, {"deny": ["Bash(rm *)", "Shell(rm)"]})
    response = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
    error = response["error"]
    assert error["code"] == -32602
    assert str(file) in error["data"]["cwd"] and '"Shell(rm)"' in error["data"]["cwd"]


@pytest.mark.parametrize("entry", ["Read([oops)", 7])
def test_a_server_whose_config_holds_a_bad_rule_does_not_start(model, tmp_path, entry):
    config = user_config(tmp_path / "config", permissions={"allow": [entry]})
    result = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp"],
        env=model_env(model.url, tmp_path / "config"),
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert str(config) in result.stderr and json.dumps(entry) in result.stderr


def test_the_first_session_new_of_a_fresh_process_checks_the_project_rules_too(spawn, workspace):
    file = project_rules(workspace, {"allow": ["Read(x"]})
    agent = spawn()  # its first plain session/new may be answered before the SDK has loaded (acp/early.py)
    response = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert response["error"]["code"] == -32602 and str(file) in response["error"]["data"]["cwd"]


def test_permissions_trust_without_a_project_file_and_a_wrong_argument_say_so(agent, workspace, tmp_path):
    session_id = agent.new_session(workspace)
    _, seen = agent.prompt(session_id, "/permissions trust")
    assert "there is no project rules file (.iac-code/settings.json) to trust here" in answer_text(seen)
    _, seen = agent.prompt(session_id, "/permissions everything")
    assert "usage: /permissions, or /permissions trust" in answer_text(seen)
    _, seen = agent.prompt(session_id, "/permissions")
    assert "Deny rules: none" in answer_text(seen) and "Project: no .iac-code/settings.json" in answer_text(seen)
