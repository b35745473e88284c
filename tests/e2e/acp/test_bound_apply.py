"""bash's Terraform apply bound to a reviewed plan, over ACP with the real terraform (offline: terraform_data
only): the one permission request carries the plan; what is applied is the reviewed plan whatever the files
say by then; reject, a tampered plan file and a stale plan apply nothing; no changes asks nothing; a plan
error and a line the binding does not cover are asked as before, with the reason in the content."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import updates
from tests.terraform_binary import MIXED_CHANGE_APPLIED as APPLIED
from tests.terraform_binary import MIXED_CHANGE_EDITED as EDITED
from tests.terraform_binary import applied_then_edited

COUNTS = "2 to add, 1 to change, 1 to replace, 1 to destroy"


pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform


@pytest.fixture
def net(workspace: Path) -> Path:
    """`net/`: applied once, then edited so that a plan adds 2, changes 1, replaces 1 and destroys 1."""
    return applied_then_edited(workspace / "net", APPLIED, EDITED)


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def state(net: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((net / "terraform.tfstate").read_text())
    return document


def inputs(net: Path) -> dict[str, Any]:
    """Each resource's name → its input (None where it has none)."""
    found = {}
    for resource in state(net)["resources"]:
        attributes = resource["instances"][0]["attributes"]
        found[resource["name"]] = (attributes.get("input") or {}).get("value")
    return found


def requests(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"] for m in seen if m.get("method") == "session/request_permission"]


def finished(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done


def text_of(blocks: list[dict[str, Any]] | None) -> str:
    return "".join(block["content"]["text"] for block in blocks or [] if block["type"] == "content")


def allow(request: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def reject(request: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}


@pytest.mark.parametrize(
    "command",
    ["terraform -chdir=net apply -auto-approve", "cd net && terraform apply -auto-approve -input=false"],
)
def test_one_question_with_the_plan_then_exactly_the_reviewed_plan_is_applied(agent, model, workspace, net, command):
    session_id = agent.new_session(workspace)
    model.add(bash(command), {"text": "applied"})

    def edit_then_allow(request: dict[str, Any]) -> dict[str, Any]:
        (net / "main.tf").write_text(EDITED.replace('"v2"', '"v3"') + 'resource "terraform_data" "three" {}\n')
        return allow(request)

    response, seen = agent.prompt(session_id, "apply net", on_permission=edit_then_allow)
    assert response["result"]["stopReason"] == "end_turn"
    (asked,) = requests(seen)  # the guard's shim did not ask again about the apply it runs
    call = asked["toolCall"]
    assert call["title"] == f"Infrastructure change: terraform apply in net/: {COUNTS}"
    assert [option["kind"] for option in asked["options"]] == ["allow_once", "reject_once"]
    plan = call["rawInput"]["plan"]
    assert call["rawInput"]["command"] == command and call["rawInput"]["infrastructureChange"] is True
    assert plan["directory"] == str(net.resolve())
    assert plan["counts"] == {"create": 2, "update": 1, "delete": 1, "replace": 1, "forget": 0, "move": 0}
    shown = text_of(call["content"])
    assert shown.startswith(
        f"terraform plan in {net.resolve()}: {COUNTS}\n"
        "- destroy terraform_data.old (no longer in the configuration)\n- replace terraform_data.web"
    )
    done = finished(seen)
    assert done["status"] == "completed", text_of(done.get("content"))
    assert text_of(done["content"]).startswith(f"Applied the reviewed plan ({COUNTS}): terraform apply -input=false ")
    assert done["rawOutput"]["plan"]["sha256"] == plan["sha256"]
    assert inputs(net) == {"db": "v2", "web": None, "one": None, "two": None}  # reviewed, not the later edit
    assert not Path(plan["planFile"]).exists()  # an applied plan is discarded


def test_reject_leaves_the_state_untouched(agent, model, workspace, net):
    serial = state(net)["serial"]
    session_id = agent.new_session(workspace)
    model.add(bash("cd net && terraform apply -auto-approve"), {"text": "not applied"})
    _, seen = agent.prompt(session_id, "apply net", on_permission=reject)
    (asked,) = requests(seen)
    assert not Path(asked["toolCall"]["rawInput"]["plan"]["planFile"]).exists()
    assert finished(seen)["status"] == "failed"
    assert state(net)["serial"] == serial


def test_a_plan_file_changed_after_the_review_is_not_applied(agent, model, workspace, net):
    serial = state(net)["serial"]
    session_id = agent.new_session(workspace)
    model.add(bash("terraform -chdir=net apply -auto-approve"), {"text": "refused"})

    def tamper_then_allow(request: dict[str, Any]) -> dict[str, Any]:
        with Path(request["params"]["toolCall"]["rawInput"]["plan"]["planFile"]).open("ab") as plan_file:
            plan_file.write(b"\0")
        return allow(request)

    _, seen = agent.prompt(session_id, "apply net", on_permission=tamper_then_allow)
    done = finished(seen)
    assert done["status"] == "failed"
    assert "sha256 differs" in text_of(done["content"]) and "Plan again" in text_of(done["content"])
    assert state(net)["serial"] == serial


def test_no_changes_asks_nothing_and_runs_nothing(agent, model, workspace, net):
    (net / "main.tf").write_text(APPLIED)
    serial = state(net)["serial"]
    session_id = agent.new_session(workspace)
    model.add(bash("cd net && terraform destroy -auto-approve -target=terraform_data.gone"), {"text": "nothing"})
    _, seen = agent.prompt(session_id, "destroy gone")  # a permission request fails this helper
    done = finished(seen)
    assert done["status"] == "completed"
    assert text_of(done["content"]).startswith("No changes: nothing to apply, nothing ran.\n")
    assert "No changes." in text_of(done["content"])
    assert done["rawOutput"]["plan"]["counts"] == dict.fromkeys(
        ("create", "update", "delete", "replace", "forget", "move"), 0
    )
    assert state(net)["serial"] == serial


def test_a_plan_error_is_asked_on_the_command_line_with_terraforms_error(agent, model, workspace, net):
    (net / "broken.tf").write_text('resource "terraform_data" "x" {\n')
    session_id = agent.new_session(workspace)
    model.add(bash("terraform -chdir=net apply -auto-approve"), {"text": "broken"})
    _, seen = agent.prompt(session_id, "apply net", on_permission=reject)
    (asked,) = requests(seen)
    call = asked["toolCall"]
    assert call["title"] == "Infrastructure change: Run terraform -chdir=net apply -auto-approve"
    assert "plan" not in call["rawInput"] and call["rawInput"]["infrastructureChange"] is True
    shown = text_of(call["content"])
    assert shown.startswith(
        "Not bound to a reviewed plan: the plan could not be made. If allowed, the command line runs as typed.\n"
        f"terraform plan failed in {net.resolve()}:"
    )
    assert "Unclosed configuration block" in shown


def test_a_line_the_binding_does_not_cover_is_asked_as_before_with_a_note(agent, model, workspace, net):
    serial = state(net)["serial"]
    session_id = agent.new_session(workspace)
    model.add(bash("terraform -chdir=net apply -auto-approve | tee apply.log"), {"text": "asked"})
    _, seen = agent.prompt(session_id, "apply net", on_permission=allow)
    (asked,) = requests(seen)  # asked once, on the line; the shim's run is covered by that answer
    call = asked["toolCall"]
    assert call["title"] == "Infrastructure change: Run terraform -chdir=net apply -auto-approve | tee apply.log"
    assert "plan" not in call["rawInput"]
    assert text_of(call["content"]) == (
        "Not bound to a reviewed plan: it uses `|` (only `&&`, `;` and new lines join commands that can be bound). "
        "If allowed, the command line runs as typed."
    )
    assert finished(seen)["status"] == "completed"  # it ran as typed
    assert state(net)["serial"] > serial


def test_an_apply_naming_a_plan_iac_plan_made_reviews_that_plan_and_a_stale_one_is_refused(
    agent, model, workspace, net
):
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [{"name": "iac_plan", "arguments": {"path": "net"}}]}, {"text": "planned"})
    _, seen = agent.prompt(session_id, "plan net")
    made = finished(seen)["rawOutput"]["plan"]
    # Meanwhile someone else applies: the saved plan's state is gone.
    subprocess.run(["terraform", "apply", "-auto-approve", "-input=false"], cwd=net, check=True, capture_output=True)
    model.add(bash(f"cd net && terraform apply {made['planFile']}"), {"text": "stale"})
    _, seen = agent.prompt(session_id, "apply that plan", on_permission=allow)
    (asked,) = requests(seen)
    assert asked["toolCall"]["rawInput"]["plan"] == made  # the plan reviewed is the one iac_plan made
    done = finished(seen)
    assert done["status"] == "failed"
    assert text_of(done["content"]).startswith("terraform called the reviewed plan stale")


@pytest.mark.parametrize("mode", ["plan", "read-only"])
def test_modes_that_change_nothing_refuse_it_without_planning(agent, model, workspace, net, mode):
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add(bash("terraform -chdir=net apply -auto-approve"), {"text": "refused"})
    _, seen = agent.prompt(session_id, "apply net")
    done = finished(seen)
    assert done["status"] == "failed"
    refusal = "Not run: the session is in plan mode" if mode == "plan" else "Permission denied."
    assert text_of(done["content"]).startswith(refusal)
