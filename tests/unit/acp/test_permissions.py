import pytest

from iac_code.acp.permissions import decide_without_asking, parse_answer


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


def test_modes_and_memory():
    assert decide_without_asking("read", "read-only", None) == "allow"
    assert decide_without_asking("write", "read-only", "allow") == "deny"
    assert decide_without_asking("write", "accept-edits", None) == "allow"
    assert decide_without_asking("execute", "accept-edits", None) is None
    assert decide_without_asking("write", "accept-edits", "reject") == "deny"
    assert decide_without_asking("execute", "default", "allow") == "allow"
    assert decide_without_asking("write", "default", None) is None
