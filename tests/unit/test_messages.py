"""Message (de)serialisation: only what differs from the defaults is written, images travel with the user
message, and stored lines without them still load."""

import json
from dataclasses import asdict
from uuid import UUID

import pytest

from iac_code.messages import (
    Audio,
    Diff,
    Image,
    Location,
    Message,
    Resource,
    Shown,
    ToolCall,
    message_ids,
    thought_id,
    tool_result,
    user,
)
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


def test_what_a_client_was_shown_round_trips_and_an_image_the_model_has_is_stored_once():
    svg = Image("image/svg+xml", "PHN2Zy8+")  # shown to the client only
    link = {"type": "resource_link", "uri": "file:///w/state", "name": "state"}
    shown = Shown(
        raw_output={"findings": [{"line": 3}]},
        diff=Diff("/w/main.tf", None, "new"),
        locations=[Location("/w/main.tf", 3), Location("/w/vars.tf")],
        blocks=[PNG, svg, Audio("audio/wav", "UklGRg=="), Resource(link)],
        terminal_id="term-1",
    )
    message = tool_result(CALL, "1 finding", images=[PNG], shown=shown)
    written = json.loads(json.dumps(message.to_dict()))
    assert written["shown"] == {
        "raw_output": {"findings": [{"line": 3}]},
        "diff": {"path": "/w/main.tf", "new_text": "new"},
        "locations": [{"path": "/w/main.tf", "line": 3}, {"path": "/w/vars.tf"}],
        "blocks": [
            {"type": "image", "image": 0},
            {"type": "image", "mime_type": "image/svg+xml", "data": svg.data},
            {"type": "audio", "mime_type": "audio/wav", "data": "UklGRg=="},
            link,
        ],
        "terminal_id": "term-1",
    }
    assert json.dumps(written).count(PNG.data) == 1
    assert Message.from_dict(written) == message


def test_a_plain_result_records_that_nothing_more_was_shown_and_unknown_blocks_are_left_out():
    message = tool_result(CALL, "ok", shown=Shown())
    assert message.to_dict()["shown"] == {}, "an empty record still says this result was kept whole"
    assert Message.from_dict(message.to_dict()).shown == Shown()
    later = {**message.to_dict(), "shown": {"blocks": [{"type": "hologram"}, {"type": "image", "image": 7}]}}
    assert Message.from_dict(later).shown == Shown()
    assert Message.from_dict({"role": "tool", "text": "older"}).shown is None


def test_an_id_is_stored_and_a_message_stored_without_one_gets_the_same_derived_id_on_every_load():
    stored = [{"role": "user", "text": "hi"}, {"role": "assistant", "id": "kept-id", "text": "hello"}]
    first = message_ids("s1", [Message.from_dict(line) for line in stored])
    again = message_ids("s1", [Message.from_dict(line) for line in stored])
    assert first == again and first[1] == "kept-id" and str(UUID(first[0])) == first[0]
    assert message_ids("s2", [Message.from_dict(stored[0])]) != first[:1]  # another session's are its own
    assert Message.from_dict(Message(role="user", id="m1").to_dict()).id == "m1"


def test_a_thought_has_its_own_id_derived_from_its_message():
    assert thought_id("m1") == thought_id("m1") != thought_id("m2")
    assert thought_id("m1") != "m1"
