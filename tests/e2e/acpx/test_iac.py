"""acpx, an independent ACP client, facing an infrastructure change: a permission request without an
"always" option, which its --approve-all must still answer (allow_once) for the command to run."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import updates
from tests.e2e.acpx.client import only_request, response_to

pytestmark = pytest.mark.timeout(600)  # the first acpx test of a fresh checkout installs it

APPLY = "./terraform apply -auto-approve"


def test_approve_all_answers_an_infrastructure_change_once(acpx, model):
    terraform = acpx.workspace / "terraform"
    terraform.write_text('#!/bin/sh\necho "$@" >> applied.log\n')
    terraform.chmod(0o755)
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": APPLY}}]}, {"text": "Applied."})

    run = acpx.run("--approve-all", "exec", "Apply the plan")

    assert run.returncode == 0, run.describe()
    messages = run.messages
    permission = only_request(messages, "session/request_permission")
    params = permission["params"]
    assert [option["kind"] for option in params["options"]] == ["allow_once", "reject_once"]
    assert params["toolCall"]["title"].startswith("Infrastructure change: ")
    assert params["toolCall"]["rawInput"]["infrastructureChange"] is True
    assert response_to(messages, permission)["result"]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}
    assert (acpx.workspace / "applied.log").read_text() == "apply -auto-approve\n"
    (done,) = [u for u in updates(messages, "tool_call_update") if u.get("status") == "completed"]
    assert done["toolCallId"] == params["toolCall"]["toolCallId"]
