"""A form's answer checked against what was asked (tools/questions.py), and the form as plain text."""

from __future__ import annotations

import pytest

from iac_code.tools.questions import Field, Form, InvalidAnswer, Option, as_text, checked_values

FORM = Form(
    "Where should it go?",
    (
        Field("region", "choice", title="Region", options=(Option("eu", "Europe"), Option("us"))),
        Field("copies", "integer", minimum=1, maximum=5),
        Field("ratio", "number", required=False, maximum=1.5),
        Field("keep", "boolean", required=False),
        Field("zones", "choices", required=False, options=(Option("a"), Option("b"), Option("c")), maximum=2),
        Field("note", "string", required=False),
    ),
)


def test_a_fitting_answer_keeps_what_was_answered():
    content = {"region": "eu", "copies": 3.0, "keep": False, "zones": ["a", "c"], "note": ""}
    assert checked_values(FORM, content) == {
        "region": "eu",
        "copies": 3,
        "keep": False,
        "zones": ["a", "c"],
        "note": "",
    }


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({"copies": 2}, "'region' is required"),
        ({"region": "eu", "copies": 2, "extra": 1}, "not asked: extra"),
        ({"region": "mars", "copies": 2}, "one of the options"),
        ({"region": "eu", "copies": 2.5}, "whole number"),
        ({"region": "eu", "copies": 0}, "at least 1"),
        ({"region": "eu", "copies": 6}, "at most 5"),
        ({"region": "eu", "copies": True}, "'copies' must be a number"),
        ({"region": "eu", "copies": "2"}, "'copies' must be a number"),
        ({"region": "eu", "copies": 2, "ratio": float("nan")}, "'ratio' must be a number"),
        ({"region": "eu", "copies": 2, "ratio": 2}, "at most 1.5"),
        ({"region": "eu", "copies": 2, "keep": "yes"}, "true or false"),
        ({"region": "eu", "copies": 2, "zones": ["a", "d"]}, "not offered: 'd'"),
        ({"region": "eu", "copies": 2, "zones": ["a", "b", "c"]}, "at most 2 choices"),
        ({"region": "eu", "copies": 2, "zones": "a"}, "list of the options"),
        ({"region": 1, "copies": 2}, "'region' must be a string"),
    ],
)
def test_an_answer_that_does_not_fit_says_why(content, says):
    with pytest.raises(InvalidAnswer, match=says):
        checked_values(FORM, content)


def test_the_form_as_text_names_each_field_with_its_hints():
    text = as_text(FORM)
    assert text.splitlines()[0] == "Where should it go?"
    assert "- Region (one of: Europe / us)" in text
    assert "- copies (a whole number, at least 1, at most 5)" in text
    assert "- keep (yes or no, optional)" in text
    assert "- zones (any of: a / b / c, optional)" in text
