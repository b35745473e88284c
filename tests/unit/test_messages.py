"""A message's persisted form: only what differs from the defaults, and the same message back."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user

CALL = ToolCall(id="call_1", name="read_file", arguments={"path": "main.tf", "nested": {"a": [1, 2]}})
MESSAGES = [
    user("hello"),
    Message(role="assistant", text="Let me look.", thinking="hmm", thinking_signature="sig", tool_calls=[CALL]),
    tool_result(CALL, "resource ...", is_error=True),
    Message(role="user", text="[summary]", summary=True, kept=3),
    Message(role="assistant"),
]


@pytest.mark.parametrize("message", MESSAGES)
def test_only_fields_that_differ_from_the_defaults_are_written_and_read_back(message):
    written = message.to_dict()
    full, defaults = asdict(message), asdict(Message(role=message.role))
    assert written == {k: v for k, v in full.items() if k == "role" or v != defaults[k]}
    assert list(written) == [k for k in full if k in written]  # field order, so log lines read the same
    assert Message.from_dict(written) == message


def test_the_written_form_does_not_share_the_tool_calls():
    message = MESSAGES[1]
    written = message.to_dict()
    written["tool_calls"][0]["name"] = "changed"
    assert message.tool_calls[0].name == "read_file"
