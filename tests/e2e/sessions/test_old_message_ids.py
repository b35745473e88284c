"""A session stored before messages kept their ids (an earlier version's file store, imported on the first
start) still loads with a messageId on every chunk: derived from the session and the message's place in
the log, so a load in another process gives the same ids, and new messages get ids of their own."""

from __future__ import annotations

from tests.e2e.sessions.flows import load, replayed

from iac_code.messages import Message, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionRecord

CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def chunk_ids(agent, session_id, workspace) -> list[tuple[str, str, str]]:
    response, before = load(agent, session_id, workspace)
    assert "result" in response, response
    shown = [u for u in replayed(before, session_id) if u["sessionUpdate"] in CHUNKS]
    return [(u["sessionUpdate"], u["content"]["text"], u["messageId"]) for u in shown]


def test_an_old_session_gets_the_same_ids_on_every_load(spawn, model, workspace, config_dir):
    files = FileSessionStore(config_dir / "sessions")
    files.create(SessionRecord(session_id="sess_old", cwd=str(workspace)))
    for message in (
        user("what is in main.tf?"),
        Message(role="assistant", text="A VPC.", thinking="It holds one resource."),
        user("thanks"),
        Message(role="assistant", text="You are welcome."),
    ):
        files.append("sess_old", message)

    first = spawn()
    loaded = chunk_ids(first, "sess_old", workspace)
    assert [(kind, text) for kind, text, _ in loaded] == [
        ("user_message_chunk", "what is in main.tf?"),
        ("agent_thought_chunk", "It holds one resource."),
        ("agent_message_chunk", "A VPC."),
        ("user_message_chunk", "thanks"),
        ("agent_message_chunk", "You are welcome."),
    ]
    assert len({message_id for *_, message_id in loaded}) == len(loaded), "one id per message"
    model.add({"text": "Still a VPC."})
    response, seen = first.prompt("sess_old", "and now?")
    assert response["result"]["stopReason"] == "end_turn"
    (new_id,) = {
        u["params"]["update"]["messageId"]
        for u in seen
        if u.get("method") == "session/update" and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    }
    assert new_id not in {message_id for *_, message_id in loaded}
    assert first.close() == 0

    second = spawn()
    again = chunk_ids(second, "sess_old", workspace)
    assert again[: len(loaded)] == loaded, "the derived ids are the same in another process"
    assert again[-1] == ("agent_message_chunk", "Still a VPC.", new_id)
