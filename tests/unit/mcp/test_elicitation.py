"""An MCP server's elicitation as the user's question, and the answer as the server reads it
(mcp/elicitation.py); the schemas are the ones the official SDK's servers send."""

from __future__ import annotations

import mcp_types
import pytest
from mcp.server.elicitation import _ElicitationJsonSchema
from pydantic import BaseModel, Field

from iac_code.mcp.elicitation import CANCEL, DECLINE, Unreadable, question_of, result_of
from iac_code.tools.questions import Accepted, Form, Link, NotAnswered, Option


class Placement(BaseModel):
    region: str = Field(description="Where it lives")
    copies: int = Field(default=1, ge=1, le=5)
    ratio: float = 0.5
    keep: bool = True


def _form(schema: dict, message: str = "Where?") -> Form:
    question = question_of(mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema))
    assert isinstance(question, Form)
    return question


def test_a_pydantic_models_schema_becomes_a_form():
    form = _form(Placement.model_json_schema(schema_generator=_ElicitationJsonSchema))
    fields = {field.name: field for field in form.fields}
    assert form.message == "Where?"
    assert (fields["region"].kind, fields["region"].description, fields["region"].required) == (
        "string",
        "Where it lives",
        True,
    )
    assert (fields["copies"].kind, fields["copies"].minimum, fields["copies"].maximum) == ("integer", 1, 5)
    assert (fields["copies"].default, fields["copies"].required) == (1, False)
    assert (fields["ratio"].kind, fields["keep"].kind, fields["keep"].default) == ("number", "boolean", True)


def test_enums_titled_or_not_and_multi_selects_become_choices():
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "tier": {"type": "string", "oneOf": [{"const": "gold", "title": "Gold"}]},
            "zones": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
        },
    }
    fields = {field.name: field for field in _form(schema).fields}
    assert (fields["size"].kind, fields["size"].options) == ("choice", (Option("s", "Small"), Option("l", "Large")))
    assert fields["tier"].options == (Option("gold", "Gold"),)
    assert (fields["zones"].kind, fields["zones"].options, fields["zones"].maximum) == (
        "choices",
        (Option("a"), Option("b")),
        2,
    )
    assert fields["tags"].options == (Option("x", "X"),)
    assert not any(field.required for field in fields.values())


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"where": {"type": "object"}}},
        {"type": "object", "properties": {"zones": {"type": "array", "items": {"type": "integer"}}}},
        {"type": "object", "properties": {"x": "string"}},
    ],
)
def test_a_schema_outside_the_restricted_subset_is_unreadable(schema):
    with pytest.raises(Unreadable):
        question_of(mcp_types.ElicitRequestFormParams(message="?", requested_schema=schema))


def test_a_url_request_is_a_link():
    params = mcp_types.ElicitRequestURLParams(message="Sign in", url="https://example.com", elicitation_id="e7")
    assert question_of(params) == Link("Sign in", "https://example.com", "e7")


FORM = _form({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]})


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        (Accepted({"n": 2}), mcp_types.ElicitResult(action="accept", content={"n": 2})),
        (Accepted({"n": 9}), CANCEL),
        (NotAnswered("declined"), DECLINE),
        (NotAnswered("unsupported"), DECLINE),
        (NotAnswered("cancelled"), CANCEL),
        (NotAnswered("failed", "broken pipe"), CANCEL),
    ],
)
def test_the_answer_as_the_server_reads_it(answer, result):
    assert result_of(FORM, answer) == result


def test_an_accepted_link_carries_no_content():
    assert result_of(Link("m", "https://example.com", "e"), Accepted({})) == mcp_types.ElicitResult(action="accept")
