"""iac_plan over ACP with the real terraform (offline: terraform_data only): the model's call and /preview show
the plan contract in rawOutput.plan, the declaring lines as locations and the summary; it runs in every mode
without a question; errors are failed calls with terraform's text; a sensitive value reaches neither the wire,
the agent's log nor the store; a deleted session's plan files go."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, model_env, updates
from tests.fakes.openai_server import ScriptedOpenAI
from tests.terraform_binary import applied_then_edited

SECRETS = ("s3cr3t-e2e-0b9d41", "s3cr3t-e2e-77c2e0")  # the sensitive variable's value before and after
MODULE = """\
variable "token" {
  type      = string
  sensitive = true
  default   = "TOKEN"
}
resource "terraform_data" "keep" { input = "k" }
resource "terraform_data" "db" { input = "v1" }
resource "terraform_data" "secret" { input = var.token }
"""


pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform


@pytest.fixture
def net(workspace: Path) -> Path:
    """`net/`: applied once, then edited so a plan creates, updates, replaces and destroys."""
    applied = MODULE.replace("TOKEN", SECRETS[0]).replace('"keep"', '"old"')
    edited = MODULE.replace("TOKEN", SECRETS[1]).replace('input = "v1"', 'input = "v2"')
    return applied_then_edited(workspace / "net", applied, edited + 'resource "terraform_data" "new" {}\n')


def plan_call(**arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "iac_plan", "arguments": arguments}]}


def finished(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done


def shown_text(update: dict[str, Any]) -> str:
    return "".join(block["content"]["text"] for block in update.get("content") or [] if block["type"] == "content")


@pytest.mark.parametrize("mode", ["default", "plan", "read-only"])
def test_the_models_call_shows_the_plan_in_every_mode_without_asking(agent, model, workspace, net, mode):
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add(plan_call(path="net", replace=["terraform_data.db"]), {"text": "planned"})
    response, seen = agent.prompt(session_id, "what would apply do?")  # a permission request fails this helper
    assert response["result"]["stopReason"] == "end_turn"
    (start,) = updates(seen, "tool_call")
    assert (start["title"], start["kind"]) == ("Plan net", "read")
    done = finished(seen)
    assert done["status"] == "completed"
    plan = done["rawOutput"]["plan"]
    assert plan["tool"] == "terraform" and plan["directory"] == str(net.resolve())
    assert plan["counts"] == {"create": 2, "update": 1, "delete": 1, "replace": 1, "forget": 0, "move": 0}
    actions = {entry["address"]: (entry["action"], entry["reason"]) for entry in plan["resources"]}
    assert actions == {
        "terraform_data.db": ("replace", "replace_by_request"),
        "terraform_data.keep": ("create", None),
        "terraform_data.new": ("create", None),
        "terraform_data.old": ("delete", "delete_because_no_resource_config"),
        "terraform_data.secret": ("update", None),
    }
    plan_file = Path(plan["planFile"])
    assert stat.S_IMODE(plan_file.stat().st_mode) == 0o600 and not plan_file.is_relative_to(workspace)
    main_tf = str(net.resolve() / "main.tf")
    lines = [location["line"] for location in done["locations"]]
    assert {location["path"] for location in done["locations"]} == {main_tf} and lines == [7, 8, 6, 9]
    summary = (
        f"terraform plan in {net.resolve()}: 2 to add, 1 to change, 1 to replace, 1 to destroy\n"
        "- destroy terraform_data.old (no longer in the configuration)\n"
        "- replace terraform_data.db (replacement requested (-replace)): id, input, output\n"
        "- update terraform_data.secret: input, output\n"
    )
    assert shown_text(done).startswith(summary)
    (tool_message,) = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_message["content"].startswith(summary)
    system = str(model.requests[-1]["messages"][0]["content"])
    assert ("run iac_plan (refresh_only for drift) and put its counts line" in system) == (mode == "plan")


def test_preview_runs_iac_plan_without_the_model(agent, model, workspace, net):
    session_id = agent.new_session(workspace)
    asked_before = len(model.requests)
    response, seen = agent.prompt(session_id, "/preview net")
    assert response["result"]["stopReason"] == "end_turn"
    assert len(model.requests) == asked_before
    (start,) = updates(seen, "tool_call")
    assert start["rawInput"] == {"path": "net"}
    assert finished(seen)["rawOutput"]["plan"]["counts"]["delete"] == 1


def test_errors_are_failed_calls_with_terraforms_own_text(agent, model, workspace, net):
    (net / "broken.tf").write_text('resource "terraform_data" "x" {\n')
    session_id = agent.new_session(workspace)
    model.add(plan_call(path="net"), {"text": "it does not parse"})
    _, seen = agent.prompt(session_id, "plan net")
    done = finished(seen)
    assert done["status"] == "failed"
    text = shown_text(done)
    assert text.startswith(f"terraform plan failed in {net.resolve()}:")
    assert "Unclosed configuration block" in text and "Traceback" not in text
    assert text.rstrip().endswith("and plan again.")


def test_uninitialized_and_missing_binary(spawn, model, workspace, tmp_path):
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(
        'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n'
    )
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(plan_call(path="net"), {"text": "not initialized"})
    _, seen = agent.prompt(session_id, "plan net")
    assert f"run `terraform init` in {net.resolve()}" in shown_text(finished(seen))

    bare = spawn(PATH=str(tmp_path / "no-programs"))
    session_id = bare.new_session(workspace)
    model.add(plan_call(path="net"), {"text": "no terraform"})
    _, seen = bare.prompt(session_id, "plan net")
    done = finished(seen)
    assert done["status"] == "failed" and "Neither terraform nor tofu is on PATH" in shown_text(done)


def test_a_sensitive_value_reaches_neither_the_wire_the_log_nor_the_store(model, workspace, net, tmp_path):
    agent = AgentProcess(model_env(model.url, tmp_path / "config"), "--debug")  # every frame logged on stderr
    agent.initialize()
    session_id = agent.new_session(workspace)
    model.add(plan_call(path="net"), {"text": "planned"})
    _, seen = agent.prompt(session_id, "plan net")
    plan = finished(seen)["rawOutput"]["plan"]
    changed = next(e for e in plan["resources"] if e["address"] == "terraform_data.secret")
    assert changed["changedAttributes"] == ["input", "output"]  # its change is reported, not its value
    _, replayed = agent.response(
        agent.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    )
    assert finished(replayed)["rawOutput"]["plan"]["counts"] == plan["counts"]
    assert agent.close() == 0
    assert any("iac_plan" in line for line in agent.stderr_lines), agent.stderr_lines[:5]  # the debug log showed it
    config = tmp_path / "config"
    stored = b"".join(p.read_bytes() for p in config.rglob("*") if p.is_file() and p.suffix != ".tfplan")
    assert b'"terraform_data.secret"' in stored  # the session's records hold the plan...
    for secret in SECRETS:
        assert secret not in json.dumps(seen + replayed)
        assert secret not in json.dumps(model.requests)
        assert secret not in "".join(agent.stderr_lines)
        assert secret.encode() not in stored  # ...and never the value


def test_deleting_the_session_deletes_its_plans(spawn, model, workspace, net):
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(plan_call(path="net"), {"text": "planned"})
    _, seen = agent.prompt(session_id, "plan net")
    plan_file = Path(finished(seen)["rawOutput"]["plan"]["planFile"])
    assert plan_file.exists()
    agent.result("session/delete", {"sessionId": session_id})
    assert not plan_file.exists() and not plan_file.parent.exists()


def test_headless_preview_prints_the_summary_and_the_plan_in_stream_json(workspace, net):
    with ScriptedOpenAI([]) as model:
        result = subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "-p", "/preview net", "--output-format", "stream-json"],
            cwd=workspace,
            env=model_env(model.url, workspace.parent / "headless-config"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    assert model.requests == []
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (finished,) = [e for e in events if e["type"] == "tool_result"]
    assert finished["isError"] is False
    assert finished["output"].startswith(f"terraform plan in {net.resolve()}: 2 to add, 2 to change, 1 to destroy")
    assert all(secret not in result.stdout + result.stderr for secret in SECRETS)
