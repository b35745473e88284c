"""The policy decides what an answer makes of a question too: a person's option or a headless run's flags
(`answered`), what the audit trail records in the end (`settled`), headless's answers with no one to ask
(`unasked`), a decision that could not be recorded (`unrecorded`), and how a refusal reads on the stderr of
a command whose guard's shim asked (`shim_refusal`)."""

import pytest

from iac_code.agent.policy import (
    CHECK_REFUSAL,
    EVERY_OPTION,
    PERMISSION_DENIED,
    PLAN_MODE_REFUSAL,
    Ask,
    Question,
    Refuse,
    Run,
    answer_check_command,
    answered,
    check_command,
    decide,
    settled,
    shim_refusal,
    unasked,
    unrecorded,
)
from iac_code.guard.calls import USER_REFUSAL
from iac_code.guard.channel import ShimRequest


@pytest.mark.parametrize(
    ("choice", "decision"),
    [
        ("allow_once", Run()),
        ("allow_always", Run()),
        ("reject_once", Refuse(PERMISSION_DENIED)),
        ("reject_always", Refuse(PERMISSION_DENIED)),
        ("cancelled", Refuse(PERMISSION_DENIED)),  # the turn stops too: the call never runs
    ],
)
def test_an_answer_allows_or_refuses_saying_who_answered(choice, decision):
    by_user = answered(choice)
    assert by_user == decision and by_user.source == f"user:{choice}"
    by_flags = answered(choice, "headless-flag")
    assert by_flags == decision and by_flags.source == "headless-flag"


def test_what_is_settled_is_the_answer_else_the_verdict():
    asked = Ask(EVERY_OPTION, source="mode:default")
    assert settled(asked, "reject_once").source == "user:reject_once"
    assert settled(Refuse("no", source="rule:f:Bash(rm *)"), None) == Refuse("no")
    assert settled(Refuse("no", source="rule:f:Bash(rm *)"), None).source == "rule:f:Bash(rm *)"
    assert settled(decide("write", "default", "allow"), None).source == "remembered"


def test_a_headless_run_remembers_nothing_but_its_flags():
    allowed_tool = decide("write", "default", "allow")  # --allow-tools write_file
    assert settled(allowed_tool, None, "headless-flag") == Run()
    assert settled(allowed_tool, None, "headless-flag").source == "headless-flag"
    by_yes = decide("write", "bypass-permissions", None)  # --yes is a mode, and is recorded as one
    assert settled(by_yes, None, "headless-flag").source == "mode:bypass-permissions"


def _question(subject: str, tool: str | None = None, infrastructure_change: bool = False) -> Question:
    return Question(subject, tool or subject, f"Run {subject}", infrastructure_change)


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        (
            _question("bash", infrastructure_change=True),
            "an infrastructure change: allow those with --allow-infra-changes",
        ),
        (
            _question("iac_check:tflint", "iac_check"),
            "Run iac_check:tflint: allow it with --allow-tools iac_check:tflint",
        ),
        (_question("mcp__infra__delete_bucket"), "allow it with --allow-tools mcp__infra__delete_bucket"),
        (_question("write_file"), "allow it with --allow-tools write_file or --yes"),
    ],
)
def test_unasked_a_headless_run_refuses_naming_the_flag_that_would_allow(question, reason):
    refusal = unasked(question, allow_infra_changes=False)
    assert refusal == Refuse(reason) and refusal.source == "headless-flag"


def test_allow_infra_changes_answers_an_infrastructure_change_only():
    change = unasked(_question("bash", infrastructure_change=True), allow_infra_changes=True)
    assert change == Run() and change.source == "headless-flag"
    assert unasked(_question("bash"), allow_infra_changes=True) == Refuse("allow it with --allow-tools bash or --yes")


def test_a_decision_the_trail_could_not_keep_is_refused_saying_why():
    refusal = unrecorded("OperationalError: database is locked")
    assert refusal.reason.startswith("Not run: the audit trail could not be written (OperationalError: database")
    assert refusal.source == "audit-unwritten"


@pytest.mark.parametrize(
    ("refusal", "words"),
    [
        (answered("reject_once"), USER_REFUSAL),
        (answered("cancelled", "headless-flag"), USER_REFUSAL),
        (decide("infra_change", "plan", None), f"refused: {PLAN_MODE_REFUSAL}"),
        (Refuse('Denied by rule "Bash(terraform destroy *)" in s.json'), 'refused: Denied by rule "Bash(terraform'),
    ],
)
def test_a_shim_says_the_user_refused_or_the_policys_reason(refusal, words):
    assert shim_refusal(refusal).startswith(words)


@pytest.mark.parametrize(("argv", "changes"), [(("terraform", "apply"), True), (("terraform", "plan"), False)])
def test_a_checks_command_that_changes_infrastructure_is_refused_unasked(argv, changes):
    verdict = check_command(changes)
    assert isinstance(verdict, Refuse if changes else Run) and verdict.source == "check"
    answer = answer_check_command(ShimRequest(argv[0], "/work", list(argv[1:])))
    assert answer == (f"refused: {CHECK_REFUSAL}" if changes else None)
