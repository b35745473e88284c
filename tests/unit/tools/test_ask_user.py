"""ask_user's arguments as a form, and what the model reads of each answer (tools/ask_user.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iac_code.tools.ask_user import AskUserTool, parse_form
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.questions import Accepted, Answer, Form, Link, NotAnswered

ARGS = {"message": "Size?", "fields": [{"name": "size", "kind": "choice", "options": ["small", "large"]}]}


def _context(tmp_path: Path, answer: Answer | None) -> tuple[ToolContext, list[Form | Link]]:
    asked: list[Form | Link] = []

    async def elicit(question: Form | Link) -> Answer:
        asked.append(question)
        assert answer is not None
        return answer

    return ToolContext(tmp_path, elicit=elicit if answer is not None else None), asked


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({"fields": ARGS["fields"]}, "'message' is required"),
        ({"message": "?", "fields": []}, "1 to 10 fields"),
        ({"message": "?", "fields": [{"name": "x", "kind": "date"}]}, "kind must be one of"),
        ({"message": "?", "fields": [{"name": "x", "kind": "choice"}]}, "needs options"),
        ({"message": "?", "fields": [{"name": "x", "kind": "string"}, {"name": "x", "kind": "number"}]}, "own 'name'"),
        ({"message": "?", "fields": [{"name": "x", "kind": "choice", "options": ["a", "a"]}]}, "each value once"),
        ({"message": "?", "fields": [{"name": "x", "kind": "number", "minimum": "1"}]}, "minimum must be a number"),
        ({"message": "?", "fields": [{"name": "x", "kind": "string", "required": "no"}]}, "true or false"),
    ],
)
def test_a_malformed_question_tells_the_model_what_to_fix(args, says):
    with pytest.raises(ToolError, match=says):
        parse_form(args)


def test_options_given_as_bare_values_become_options():
    (field,) = parse_form(ARGS).fields
    assert [(o.value, o.title) for o in field.options] == [("small", ""), ("large", "")]
    assert field.required


async def test_the_checked_answer_goes_to_the_model(tmp_path):
    ctx, asked = _context(tmp_path, Accepted({"size": "large"}))
    result = await AskUserTool().run(ARGS, ctx)
    assert asked == [parse_form(ARGS)]
    assert result.text == 'The user answered: {"size": "large"}' and not result.is_error and not result.ends_turn


@pytest.mark.parametrize(("why", "said"), [("declined", "declined"), ("cancelled", "dismissed")])
async def test_a_refusal_is_said_plainly(tmp_path, why, said):
    ctx, _ = _context(tmp_path, NotAnswered(why))
    result = await AskUserTool().run(ARGS, ctx)
    assert said in result.text and not result.is_error and not result.ends_turn


async def test_an_answer_that_does_not_fit_is_an_error(tmp_path):
    ctx, _ = _context(tmp_path, Accepted({"size": "huge"}))
    with pytest.raises(ToolError, match="does not fit the question"):
        await AskUserTool().run(ARGS, ctx)


@pytest.mark.parametrize("answer", [NotAnswered("unsupported"), None])
async def test_without_forms_the_question_is_text_and_ends_the_turn(tmp_path, answer: Any):
    ctx, _ = _context(tmp_path, answer)
    result = await AskUserTool().run(ARGS, ctx)
    assert result.text.startswith("Size?\n- size (one of: small / large)") and result.ends_turn
