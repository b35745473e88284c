"""iac_plan with input variables that have no value, over raw JSON-RPC on stdio with the real terraform
(offline: terraform_data only): a client that shows forms is asked for the non-sensitive ones in one form
(name, type, description), and the plan uses the answers without writing them into the user's files; a
sensitive one is never asked (the user is told to set TF_VAR_name); a client without forms sees the plan fail
as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.elicitations import FORM_CLIENT, prompt_answering, started_agent, tool_result_sent
from tests.e2e.acp.wire import AgentProcess, updates

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform

MODULE = """\
variable "region" {
  type        = string
  description = "Where the bucket lives"
}
variable "copies" { type = number }
variable "tags" { type = map(string) }
variable "kept" {
  type    = bool
  default = true
}
resource "terraform_data" "bucket" { input = "${var.region}-${var.copies}-${var.tags["team"]}-${var.kept}" }
"""
SENSITIVE = """\
variable "region" { type = string }
variable "password" {
  type      = string
  sensitive = true
}
resource "terraform_data" "db" { input = "${var.region}-${var.password}" }
"""
PLAN_APP = {"tool_calls": [{"id": "call_plan", "name": "iac_plan", "arguments": {"path": "app"}}]}


@pytest.fixture(scope="module")
def form_agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    agent = started_agent(model, tmp_path_factory.mktemp("config"), FORM_CLIENT)
    yield agent
    assert agent.close() == 0 and not agent.stdout_problems


def _module(workspace: Path, text: str) -> Path:
    app = workspace / "app"
    app.mkdir()
    (app / "main.tf").write_text(text)
    return app


def _finished(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done


def test_unset_variables_are_asked_in_one_form_and_used_for_the_plan(form_agent, model, workspace):
    app = _module(workspace, MODULE)
    model.add(PLAN_APP, {"text": "planned"})
    session_id = form_agent.new_session(workspace)
    answers = {"region": "eu", "copies": 2, "tags": '{team = "core"}'}
    response, seen, asked = prompt_answering(form_agent, session_id, lambda _: {"action": "accept", "content": answers})
    assert response["result"]["stopReason"] == "end_turn"
    (request,) = asked
    params = request["params"]
    assert params["toolCallId"] == "call_plan" and params["mode"] == "form" and "app" in params["message"]
    schema = params["requestedSchema"]
    assert list(schema["properties"]) == ["region", "copies", "tags"]  # kept has a default: not asked
    assert schema["properties"]["region"] == {
        "type": "string",
        "title": "region",
        "description": "Where the bucket lives",
    }
    assert schema["properties"]["copies"]["type"] == "number"
    assert schema["properties"]["tags"]["type"] == "string"
    assert "map(string): an HCL or JSON value" in schema["properties"]["tags"]["description"]
    assert schema["required"] == ["region", "copies", "tags"]
    done = _finished(seen)
    assert done["status"] == "completed"
    assert done["rawOutput"]["plan"]["counts"]["create"] == 1
    sent = tool_result_sent(model)
    assert 'region=eu, copies=2, tags={team = "core"}' in sent
    assert sorted(path.name for path in app.iterdir()) == ["main.tf"]  # nothing written beside the module


def test_a_sensitive_variable_is_never_asked(form_agent, model, workspace):
    _module(workspace, SENSITIVE)
    model.add(PLAN_APP, {"text": "cannot plan"})
    session_id = form_agent.new_session(workspace)
    response, seen, asked = prompt_answering(form_agent, session_id, lambda _: pytest.fail("asked a form"))
    assert response["result"]["stopReason"] == "end_turn" and not asked
    assert _finished(seen)["status"] == "failed"
    sent = tool_result_sent(model)
    assert "Not asked: password is sensitive" in sent and "TF_VAR_password" in sent


def test_a_declined_form_fails_the_plan_saying_so(form_agent, model, workspace):
    _module(workspace, MODULE)
    model.add(PLAN_APP, {"text": "fine"})
    session_id = form_agent.new_session(workspace)
    _, seen, asked = prompt_answering(form_agent, session_id, lambda _: {"action": "decline"})
    assert len(asked) == 1 and _finished(seen)["status"] == "failed"
    sent = tool_result_sent(model)
    assert "No value for required variable" in sent and "The user was asked for these variables and declined" in sent


def test_without_forms_the_plan_fails_as_before(model, workspace, tmp_path):
    agent = started_agent(model, tmp_path / "config", {})
    try:
        _module(workspace, MODULE)
        model.add(PLAN_APP, {"text": "fine"})
        session_id = agent.new_session(workspace)
        _, seen, asked = prompt_answering(agent, session_id, lambda _: pytest.fail("asked a form"))
        assert not asked and _finished(seen)["status"] == "failed"
        sent = tool_result_sent(model)
        assert "No value for required variable" in sent and "asked" not in sent
    finally:
        assert agent.close() == 0
