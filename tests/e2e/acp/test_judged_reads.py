"""Read calls go through the session's judge too: a `reject_always` the session remembers for read_file
(kept with the session, as every "always" answer is) refuses the model's read_file call without running
it, in a new process that loaded the session."""

from __future__ import annotations

import asyncio

from tests.e2e.acp.wire import model_env, updates

from iac_code.agent.policy import PERMISSION_DENIED
from iac_code.config import load_settings
from iac_code.sessions.open import open_store
from iac_code.sessions.store import RecordChanges


async def _remember_reject(settings, session_id: str, tool: str) -> None:
    store = await open_store(settings)
    try:
        await store.update(session_id, RecordChanges(permissions={tool: "reject"}))
    finally:
        await store.close()


def test_a_remembered_reject_for_a_read_tool_refuses_its_call_without_running_it(spawn, model, workspace, tmp_path):
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    first = spawn()
    session_id = first.new_session(workspace)
    first.close()
    asyncio.run(_remember_reject(load_settings(model_env(model.url, tmp_path / "config")), session_id, "read_file"))

    second = spawn()
    second.result("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    model.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]}, {"text": "I may not."})
    response, seen = second.prompt(session_id, "what is in main.tf?")  # a read: never asked
    assert response["result"]["stopReason"] == "end_turn"
    (start,) = updates(seen, "tool_call")
    ends = [u for u in updates(seen, "tool_call_update") if u["toolCallId"] == start["toolCallId"]]
    assert [u.get("status") for u in ends] == ["failed"], "refused before it ran: never in_progress"
    assert ends[0]["rawOutput"] == PERMISSION_DENIED
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [PERMISSION_DENIED]
