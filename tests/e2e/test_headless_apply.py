"""`iac-code -p` and an apply bound to a reviewed plan (real terraform, terraform_data only): with
`--allow-infra-changes` the reviewed plan is applied and its summary printed on stderr; without it nothing is
applied; stream-json and json carry the question, its answer and the plan contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.e2e.acp.test_bound_apply import APPLIED, COUNTS, EDITED, inputs, state
from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI
from tests.terraform_binary import applied_then_edited

APPLY = {"tool_calls": [{"name": "bash", "arguments": {"command": "cd net && terraform apply -auto-approve"}}]}


pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform


@pytest.fixture
def net(workspace: Path) -> Path:
    return applied_then_edited(workspace / "net", APPLIED, EDITED)


def test_allow_infra_changes_applies_the_reviewed_plan_and_prints_its_summary(workspace, net):
    with ScriptedOpenAI([APPLY, {"text": "applied"}]) as model:
        result = run(workspace, model, "-p", "apply net", "--yes", "--allow-infra-changes")
    assert result.returncode == 0, result.stderr
    assert f"? Infrastructure change: terraform apply in net/: {COUNTS} → allow_once\n" in result.stderr
    assert f"terraform plan in {net.resolve()}: {COUNTS}\n- destroy terraform_data.old" in result.stderr
    assert inputs(net) == {"db": "v2", "web": None, "one": None, "two": None}
    (tool_message,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_message.startswith(f"Applied the reviewed plan ({COUNTS}): terraform apply -input=false ")


def test_without_it_the_plan_is_shown_and_nothing_is_applied(workspace, net):
    serial = state(net)["serial"]
    with ScriptedOpenAI([APPLY, {"text": "denied"}]) as model:
        result = run(workspace, model, "-p", "apply net", "--yes", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert state(net)["serial"] == serial
    assert "denied bash (an infrastructure change: allow those with --allow-infra-changes)" in result.stderr
    (question,) = json.loads(result.stdout)["permissionRequests"]
    assert question["title"] == f"Infrastructure change: terraform apply in net/: {COUNTS}"
    assert question["answer"] == "reject_once" and question["infrastructureChange"] is True
    assert question["plan"]["counts"]["replace"] == 1 and question["details"].startswith("terraform plan in ")
    assert not Path(question["plan"]["planFile"]).exists()  # a rejected plan is discarded


def test_stream_json_has_the_question_with_its_plan_before_the_result(workspace, net):
    with ScriptedOpenAI([APPLY, {"text": "applied"}]) as model:
        result = run(
            workspace, model, "-p", "apply net", "--yes", "--allow-infra-changes", "--output-format", "stream-json"
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [event["type"] for event in events]
    assert types.index("tool_use") < types.index("permission_request") < types.index("tool_result")
    question = events[types.index("permission_request")]
    assert question["answer"] == "allow_once" and question["plan"]["directory"] == str(net.resolve())
    assert inputs(net)["db"] == "v2"
