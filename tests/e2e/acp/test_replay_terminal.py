"""A command that ran in the editor's terminal: live, its call shows the terminal; loaded in a new process
(the terminal is gone), the same call shows the output as text, the rest of its final update unchanged."""

from __future__ import annotations

import pytest
from acp import text_block
from acp.schema import ContentToolCallContent, TerminalToolCallContent, TextContentBlock, ToolCallProgress
from tests.e2e.acp.editor import Editor, editing

pytestmark = pytest.mark.asyncio


def final(editor: Editor) -> ToolCallProgress:
    (update,) = [u for u in editor.of_kind("tool_call_update") if u.status in ("completed", "failed")]
    return update


async def test_a_call_that_ran_in_the_editors_terminal_replays_its_output_as_text(model, workspace, tmp_path):
    config = tmp_path / "config"
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "echo planned"}}]}, {"text": "ok"})
    live_editor = Editor()
    async with editing(live_editor, model.url, config) as conn:
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("plan it")])
    live = final(live_editor)
    assert live.content == [TerminalToolCallContent(type="terminal", terminal_id="term-1")]

    replay_editor = Editor()
    async with editing(replay_editor, model.url, config) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    replayed = final(replay_editor)
    output = "planned\nExit code: 0"
    assert replayed.content == [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=output))
    ]
    assert replayed.model_copy(update={"content": live.content}) == live
    assert replay_editor.created == [], "nothing runs again on a load"
