import pytest

from iac_code.acp.permissions import parse_answer, permission_options
from iac_code.agent.policy import ONCE_OPTIONS


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ({"outcome": {"outcome": "selected", "optionId": "allow_always"}}, "allow_always"),
        ({"outcome": {"outcome": "selected", "option_id": "reject_always"}}, "reject_always"),
        ({"outcome": {"outcome": "cancelled"}}, "cancelled"),
        ({"outcome": "allowed", "option_id": "allow_once"}, "allow_once"),
        ({"outcome": "allowed"}, "allow_once"),
        ({"outcome": "denied"}, "reject_once"),
        ({"outcome": {"outcome": "selected", "optionId": "bogus"}}, "reject_once"),
        ({"outcome": {"outcome": "selected"}}, "reject_once"),
        (None, "reject_once"),
        ({"outcome": "maybe"}, "reject_once"),
    ],
)
def test_parse_answer(answer, choice):
    assert parse_answer(answer) == choice


def test_an_option_that_was_not_offered_denies():
    always = {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
    assert parse_answer(always, ONCE_OPTIONS) == "reject_once"
    assert parse_answer({"outcome": {"outcome": "selected", "optionId": "allow_once"}}, ONCE_OPTIONS) == "allow_once"


def test_option_ids_are_their_kinds():
    options = permission_options(ONCE_OPTIONS)
    assert [(o.option_id, o.kind) for o in options] == [("allow_once", "allow_once"), ("reject_once", "reject_once")]
