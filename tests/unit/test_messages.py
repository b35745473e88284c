"""Message (de)serialisation: images travel with the user message; stored lines without them still load."""

import json

from iac_code.messages import Image, Message
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionRecord

PNG = Image(
    "image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_images_round_trip_through_a_dict():
    message = Message(role="user", text="What is wrong in this console?", images=[PNG, Image("image/jpeg", "/9j/")])
    data = json.loads(json.dumps(message.to_dict()))
    assert data["images"] == [{"mime_type": "image/png", "data": PNG.data}, {"mime_type": "image/jpeg", "data": "/9j/"}]
    assert Message.from_dict(data) == message


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
