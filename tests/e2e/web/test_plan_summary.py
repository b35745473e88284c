"""An infrastructure change in the browser: the agent's `terraform apply` is asked as a reviewed plan, and the
permission dialog shows the plan (counts with destroys and replaces first, then each resource) and only the
options the agent offers for it; rejecting applies nothing. Real terraform, offline (terraform_data only)."""

from __future__ import annotations

import json

import pytest
from tests.e2e.web.page import by_testid
from tests.terraform_binary import MIXED_CHANGE_APPLIED as APPLIED
from tests.terraform_binary import MIXED_CHANGE_EDITED as EDITED
from tests.terraform_binary import applied_then_edited

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform (failed under CI=true)


def test_the_permission_dialog_shows_the_plan_destroys_first_and_a_reject_applies_nothing(page, model, live):
    net = applied_then_edited(live.workspace / "net", APPLIED, EDITED)
    serial = json.loads((net / "terraform.tfstate").read_text())["serial"]
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "terraform -chdir=net apply -auto-approve"}}]})
    model.add({"text": "not applied"})
    page.open()
    page.new_session()
    page.send("apply net")

    summary = page.visible(by_testid("plan-summary"))
    counts = [item.text for item in summary.find_elements("css selector", ".plan-counts li")]
    assert counts == ["1 to destroy", "1 to replace", "1 to change", "2 to add"]
    resources = [item.text for item in summary.find_elements("css selector", ".plan-resources li")]
    assert resources[:2] == ["destroy terraform_data.old", "replace terraform_data.web (forced by triggers_replace)"]
    assert sorted(resources[2:]) == [
        "create terraform_data.one",
        "create terraform_data.two",
        "update terraform_data.db",
    ]
    title = page.one("#permission-title").text
    assert title.startswith("Infrastructure change: terraform apply")
    kinds = [option.get_attribute("data-kind") for option in page.all(by_testid("permission-option"))]
    assert kinds == ["allow_once", "reject_once"]  # never "always" for an infrastructure change
    page.screenshot_to("plan-summary.png")

    page.answer_permission("reject_once")
    assert page.wait_turns(1) == ["end_turn"]
    assert json.loads((net / "terraform.tfstate").read_text())["serial"] == serial
