"""A question as ACP's elicitation/create and the client's answer back (acp/elicitation.py)."""

from __future__ import annotations

from typing import Any

import pytest

from iac_code.acp.elicitation import elicitation_request, parsed_answer, supported
from iac_code.acp.schema_v1_21 import ClientCapabilities
from iac_code.tools.questions import Accepted, Field, Form, Link, NotAnswered, Option

DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_none": True}
FORM = Form(
    "Pick",
    (
        Field("region", "choice", title="Region", description="Where", options=(Option("eu", "Europe"), Option("us"))),
        Field("copies", "integer", minimum=1, maximum=5, default=2),
        Field("ratio", "number", required=False, minimum=0.5, default=1),
        Field("keep", "boolean", required=False, default=True),
        Field("zones", "choices", options=(Option("a"),), minimum=1, default=["a"]),
        Field("note", "string", required=False, default="none"),
    ),
)
LINK = Link("Sign in", "https://example.com/login", "e1")


def test_a_form_is_a_session_scoped_request_tied_to_the_call():
    request = elicitation_request("s1", "call_1", FORM).model_dump(**DUMP)
    assert {k: request[k] for k in ("sessionId", "toolCallId", "mode", "message")} == {
        "sessionId": "s1",
        "toolCallId": "call_1",
        "mode": "form",
        "message": "Pick",
    }
    schema = request["requestedSchema"]
    assert schema["type"] == "object" and schema["required"] == ["region", "copies", "zones"]
    assert schema["properties"] == {
        "region": {
            "type": "string",
            "title": "Region",
            "description": "Where",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "us"}],
        },
        "copies": {"type": "integer", "title": "copies", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number", "title": "ratio", "minimum": 0.5, "default": 1.0},
        "keep": {"type": "boolean", "title": "keep", "default": True},
        "zones": {
            "type": "array",
            "title": "zones",
            "items": {"anyOf": [{"const": "a", "title": "a"}]},
            "minItems": 1,
            "default": ["a"],
        },
        "note": {"type": "string", "title": "note", "default": "none"},
    }


def test_a_link_is_a_url_mode_request():
    request = elicitation_request("s1", "call_1", LINK).model_dump(**DUMP)
    assert request == {
        "sessionId": "s1",
        "toolCallId": "call_1",
        "mode": "url",
        "message": "Sign in",
        "elicitationId": "e1",
        "url": "https://example.com/login",
    }


@pytest.mark.parametrize(
    ("capabilities", "form", "link"),
    [
        (None, False, False),
        ({}, False, False),
        ({"elicitation": {}}, False, False),
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
    ],
)
def test_a_question_is_sent_only_in_a_mode_the_client_advertised(capabilities, form, link):
    known = None if capabilities is None else ClientCapabilities.model_validate(capabilities)
    assert (supported(known, FORM), supported(known, LINK)) == (form, link)


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ({"action": "accept", "content": {"a": 1}}, Accepted({"a": 1})),
        ({"action": "accept"}, Accepted({})),
        ({"action": "decline"}, NotAnswered("declined")),
        ({"action": "cancel"}, NotAnswered("cancelled")),
    ],
)
def test_the_clients_answer_is_read_by_its_action(raw, answer):
    assert parsed_answer(raw) == answer


@pytest.mark.parametrize("raw", [None, [], {"action": "maybe"}, {"action": "accept", "content": [1]}])
def test_an_answer_no_variant_reads_is_a_failure(raw):
    answer = parsed_answer(raw)
    assert isinstance(answer, NotAnswered) and answer.why == "failed" and answer.detail
