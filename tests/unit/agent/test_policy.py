"""The permission policy is exactly the table in agent/policy.py (and COMMON.md)."""

from typing import get_args

import pytest

from iac_code.agent.policy import (
    EVERY_OPTION,
    MODE_IDS,
    ONCE_OPTIONS,
    PERMISSION_DENIED,
    PLAN_MODE_REFUSAL,
    Ask,
    Refuse,
    RuleHit,
    Run,
    decide,
    remembered_after,
)
from iac_code.tools.base import Access

MODES = ["default", "accept-edits", "read-only", "plan", "bypass-permissions"]
TABLE = {
    "read": ["run", "run", "run", "run", "run"],
    "claimed_read": ["run", "run", "refuse", "refuse", "ask"],
    "write": ["ask", "run", "refuse", "refuse", "run"],
    "execute": ["ask", "ask", "refuse", "ask", "run"],
    "unguarded_execute": ["ask", "ask", "refuse", "ask", "refuse"],  # never unasked without its protection
    "external": ["ask", "ask", "refuse", "refuse", "ask"],
    "infra_change": ["ask*", "ask*", "refuse", "refuse", "ask*"],
    "infra_plan": ["run", "run", "refuse", "refuse", "run"],  # the tool then asks infra_change, plan shown
    "workspace_code": ["ask", "ask", "refuse", "refuse", "ask"],
}
CELLS = [(access, mode, cell) for access, row in TABLE.items() for mode, cell in zip(MODES, row, strict=True)]


def _word(verdict) -> str:
    if isinstance(verdict, Run):
        return "run"
    if isinstance(verdict, Refuse):
        return "refuse"
    assert isinstance(verdict, Ask)
    if verdict.infrastructure_change:
        assert verdict.options == ONCE_OPTIONS
        return "ask*"
    assert verdict.options == EVERY_OPTION
    return "ask"


def test_the_mode_list_is_the_tables():
    assert list(MODE_IDS) == MODES


@pytest.mark.parametrize(("access", "mode", "cell"), CELLS)
def test_without_memory_the_table_decides(access, mode, cell):
    assert _word(decide(access, mode, None)) == cell


@pytest.mark.parametrize(("access", "mode", "cell"), CELLS)
def test_a_remembered_allow_answers_only_where_the_table_asks(access, mode, cell):
    allowed = decide(access, mode, "allow")
    if cell == "ask":
        assert isinstance(allowed, Run)
    else:  # an "always allow" never covers an infrastructure change, nor lifts a refusal
        assert _word(allowed) == cell


@pytest.mark.parametrize(("access", "mode", "cell"), CELLS)
def test_a_remembered_reject_refuses_wherever_the_tool_would_run_or_ask(access, mode, cell):
    rejected = decide(access, mode, "reject")
    if cell in ("run", "ask", "ask*"):  # even accept-edits and bypass-permissions keep the user's "never"
        assert rejected == Refuse(PERMISSION_DENIED)
    else:
        assert _word(rejected) == cell


def test_bypassing_permissions_without_the_guards_namespaces_says_what_is_missing():
    verdict = decide("unguarded_execute", "bypass-permissions", None)
    assert isinstance(verdict, Refuse)
    assert "cloud credential files" in verdict.reason and "default mode" in verdict.reason


def test_plan_mode_tells_the_model_why():
    assert decide("write", "plan", None) == Refuse(PLAN_MODE_REFUSAL)
    assert "plan mode" in PLAN_MODE_REFUSAL
    assert decide("write", "read-only", None) == Refuse(PERMISSION_DENIED)
    assert decide("infra_plan", "plan", None) == Refuse(PLAN_MODE_REFUSAL)


def test_every_access_has_its_row():
    assert set(TABLE) == set(get_args(Access))


@pytest.mark.parametrize("mode", ["read-only", "plan"])
def test_mcp_tools_refused_in_the_modes_that_change_nothing_say_why_and_how_to_trust(mode):
    claimed = decide("claimed_read", mode, None)
    assert isinstance(claimed, Refuse)
    assert f"Not run in {mode} mode" in claimed.reason
    assert "not trusted" in claimed.reason and '"trusted": true in config.json' in claimed.reason
    external = decide("external", mode, None)
    assert isinstance(external, Refuse)
    assert f"Not run in {mode} mode" in external.reason
    assert "outside the workspace" in external.reason and '"trusted": true' in external.reason


def test_only_always_answers_are_remembered():
    assert remembered_after("allow_always") == "allow"
    assert remembered_after("reject_always") == "reject"
    assert remembered_after("allow_once") is None
    assert remembered_after("cancelled") is None


def test_each_verdict_says_what_decided_it():
    assert decide("write", "default", None).source == "mode:default"
    assert decide("execute", "read-only", None).source == "mode:read-only"
    assert decide("write", "default", "allow").source == "remembered"
    assert decide("read", "bypass-permissions", "reject").source == "remembered"
    assert decide("infra_change", "default", "allow").source == "mode:default"  # "always" never covers it


DENY = RuleHit("deny", "Bash(rm *)", "/p/.iac-code/settings.json")
ASK = RuleHit("ask", "Bash(rm *)", "/p/.iac-code/settings.json")
ALLOW = RuleHit("allow", "Bash(rm *)", "/p/.iac-code/settings.json")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("access", get_args(Access))
def test_a_deny_rule_refuses_in_every_mode_naming_the_rule(mode, access):
    verdict = decide(access, mode, "allow", DENY)
    assert verdict == Refuse('Denied by rule "Bash(rm *)" in /p/.iac-code/settings.json')
    assert verdict.source == "rule:/p/.iac-code/settings.json:Bash(rm *)"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("access", get_args(Access))
def test_an_allow_rule_only_skips_a_question_and_never_for_an_infrastructure_change(mode, access):
    by_mode, allowed = decide(access, mode, None), decide(access, mode, None, ALLOW)
    if isinstance(by_mode, Ask) and access not in ("infra_change", "infra_plan"):
        assert allowed == Run() and allowed.source == ALLOW.source
    else:
        assert allowed == by_mode and allowed.source == f"mode:{mode}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("access", get_args(Access))
def test_an_ask_rule_asks_unless_the_mode_refuses_or_a_plan_will_be_shown(mode, access):
    by_mode, asked = decide(access, mode, None), decide(access, mode, None, ASK)
    if isinstance(by_mode, Refuse) or access == "infra_plan":
        assert asked == by_mode
    else:
        assert asked == Ask(ONCE_OPTIONS, infrastructure_change=access == "infra_change")
        assert asked.source == ASK.source
