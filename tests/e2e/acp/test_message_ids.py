"""messageId on every content chunk, over raw JSON-RPC on stdio: one id per message (the user's prompt, each
model answer, each thought, each of the agent's own messages), the same id on all of a message's chunks,
unique in the session, and the same again when the session is loaded in another process; and a prompt's
content blocks replayed block for block."""

from __future__ import annotations

from itertools import groupby
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, updates
from tests.e2e.sessions.flows import replayed

pytestmark = pytest.mark.timeout(120)

CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def messages(shown: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The content chunks as messages, in order: (kind, messageId, text), consecutive chunks of one id joined."""
    chunks = [u for u in shown if u["sessionUpdate"] in CHUNKS]
    assert all(u.get("messageId") for u in chunks), "every content chunk carries its message's id"
    joined = []
    for (kind, message_id), run in groupby(chunks, key=lambda u: (u["sessionUpdate"], u["messageId"])):
        joined.append((kind, message_id, "".join(u["content"].get("text", "") for u in run)))
    return joined


def load(agent: AgentProcess, session_id: str, cwd: str) -> list[dict[str, Any]]:
    request = agent.start_request("session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": []})
    response, before = agent.response(request)
    assert "result" in response, response
    return replayed(before, session_id)


def test_each_message_has_one_id_on_all_its_chunks_unique_and_the_same_after_a_restart(spawn, model, workspace):
    (workspace / "main.tf").write_text("# vpc\n")
    model.add(
        {
            "thinking": "The user wants the files listed.",
            "text": "Let me list the files first.",
            "chunk_chars": 5,
            "delay": 0.02,  # several chunks a message (the loop merges only what waits for a slow client)
            "tool_calls": [{"name": "list_files", "arguments": {"path": "."}}],
        },
        {"thinking": "One file.", "text": "There is one file: main.tf.", "chunk_chars": 4, "delay": 0.02},
        {"text": "Still one file."},
    )
    first = spawn()
    session_id = first.new_session(workspace)
    response, seen = first.prompt(session_id, "what is here?")
    assert response["result"]["stopReason"] == "end_turn"
    _, said = first.prompt(session_id, "/cost")  # the agent's own message (not the model's)
    response, again = first.prompt(session_id, "and now?")
    assert response["result"]["stopReason"] == "end_turn"

    live = messages(updates(seen)) + messages(updates(again))
    assert [(kind, text) for kind, _, text in live] == [
        ("agent_thought_chunk", "The user wants the files listed."),
        ("agent_message_chunk", "Let me list the files first."),
        ("agent_thought_chunk", "One file."),
        ("agent_message_chunk", "There is one file: main.tf."),
        ("agent_message_chunk", "Still one file."),
    ]
    (own,) = messages(updates(said))
    ids = [message_id for _, message_id, _ in [*live, own]]
    assert len(set(ids)) == len(ids), "one id per message, unique in the session"
    first.close()

    second = spawn()  # a new process: only the store is shared
    loaded = messages(load(second, session_id, str(workspace)))
    third = spawn()
    assert messages(load(third, session_id, str(workspace))) == loaded, "two loads agree"
    prompts = [(message_id, text) for kind, message_id, text in loaded if kind == "user_message_chunk"]
    assert [text for _, text in prompts] == ["what is here?", "and now?"]
    assert [m for m in loaded if m[0] != "user_message_chunk"] == live, "the model's messages keep their live ids"
    assert len({message_id for _, message_id, _ in loaded}) == len(loaded)


def test_a_prompt_is_replayed_block_for_block(spawn, model, workspace):
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    sent = [
        {"type": "text", "text": "Review these", "_meta": {"editor.example/selection": {"line": 3}}},
        {
            "type": "resource_link",
            "name": "main.tf",
            "uri": (workspace / "main.tf").as_uri(),
            "mimeType": "text/x-hcl",
            "annotations": {"audience": ["user"], "priority": 0.5},
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///elsewhere/vars.tf", "mimeType": "text/x-hcl", "text": 'variable "a" {}\n'},
        },
        {"type": "image", "mimeType": "image/png", "data": PNG},
    ]
    model.add({"text": "Reviewed."}, {"text": "Reviewed again."})
    first = spawn(IAC_CODE_IMAGES="1")  # the model reads the image: it is stored once, with the message
    session_id = first.new_session(workspace)
    assert first.prompt(session_id, sent)[0]["result"]["stopReason"] == "end_turn"
    model_saw = str(model.requests[-1]["messages"])
    assert 'variable \\"a\\" {}' in model_saw or 'variable "a" {}' in model_saw
    first.close()

    text_only = spawn()  # its model does not read images: the block still replays as it was sent
    session_text_only = text_only.new_session(workspace)
    assert text_only.prompt(session_text_only, sent)[0]["result"]["stopReason"] == "end_turn"
    text_only.close()

    second = spawn()
    for loaded_id in (session_id, session_text_only):
        shown = load(second, loaded_id, str(workspace))
        prompt = [u for u in shown if u["sessionUpdate"] == "user_message_chunk"]
        assert [u["content"] for u in prompt] == sent
        assert len({u["messageId"] for u in prompt}) == 1
