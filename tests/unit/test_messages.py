"""Message (de)serialisation: only what differs from the defaults is written, images travel with the user
message, and stored lines without them still load."""

import json
from dataclasses import asdict

import pytest

from iac_code.messages import Image, Message, ToolCall, tool_result, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionRecord

PNG = Image(
    "image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
CALL = ToolCall(id="call_1", name="read_file", arguments={"path": "main.tf", "nested": {"a": [1, 2]}})
MESSAGES = [
    user("hello"),
    Message(role="user", text="see the diagram", images=[PNG]),
    Message(role="assistant", text="Let me look.", thinking="hmm", thinking_signature="sig", tool_calls=[CALL]),
    tool_result(CALL, "resource ...", is_error=True),
    tool_result(CALL, "The diagram:", images=[PNG], title="diagram (MCP server docs)"),
    Message(role="user", text="[summary]", summary=True, kept=3),
    Message(role="assistant"),
]


def test_images_round_trip_through_a_dict():
    message = Message(role="user", text="What is wrong in this console?", images=[PNG, Image("image/jpeg", "/9j/")])
    data = json.loads(json.dumps(message.to_dict()))
    assert data["images"] == [{"mime_type": "image/png", "data": PNG.data}, {"mime_type": "image/jpeg", "data": "/9j/"}]
    assert Message.from_dict(data) == message


def test_a_tool_result_keeps_its_images_title_and_kind():
    data = json.loads(json.dumps(tool_result(CALL, "", images=[PNG], title="Read main.tf", kind="read").to_dict()))
    assert data == {
        "role": "tool",
        "tool_call_id": "call_1",
        "tool_name": "read_file",
        "tool_title": "Read main.tf",
        "tool_kind": "read",
        "images": [{"mime_type": "image/png", "data": PNG.data}],
    }
    assert Message.from_dict(data).images == [PNG]


def test_a_message_without_images_stays_as_it_was_stored_before():
    line = {"role": "user", "text": "hello"}
    assert Message(role="user", text="hello").to_dict() == line
    assert Message.from_dict(line).images == []


def test_images_survive_the_session_store(tmp_path):
    store = FileSessionStore(tmp_path / "sessions", durable=False)
    store.create(SessionRecord(session_id="s1", cwd="/work"))
    message = Message(role="user", text="diagram attached", images=[PNG])
    store.append("s1", message)
    _, history = FileSessionStore(tmp_path / "sessions").load("s1")
    assert history == [message]


@pytest.mark.parametrize("message", MESSAGES)
def test_only_fields_that_differ_from_the_defaults_are_written_and_read_back(message):
    written = message.to_dict()
    full, defaults = asdict(message), asdict(Message(role=message.role))
    assert written == {k: v for k, v in full.items() if k == "role" or v != defaults[k]}
    assert list(written) == [k for k in full if k in written]  # field order, so log lines read the same
    assert Message.from_dict(json.loads(json.dumps(written))) == message


def test_the_written_form_does_not_share_the_tool_calls():
    message = MESSAGES[2]
    written = message.to_dict()
    written["tool_calls"][0]["name"] = "changed"
    assert message.tool_calls[0].name == "read_file"
