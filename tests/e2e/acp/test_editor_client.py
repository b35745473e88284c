"""Working inside the editor (issue 10), with the official SDK's client playing the editor (editor.py):
unsaved buffers, writes through the editor, the terminal lifecycle, images, plans, sub-agent progress,
the bypass mode, custom commands and instructions, and calls that end when a permission is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp import image_block, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileEditToolCallContent,
    ImageContentBlock,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
)
from tests.e2e.acp.editor import Editor, editing

from iac_code.skills.discovery import bundled_skills
from iac_code.skills.skill_file import Skill
from iac_code.system.processes import contained_in_terminal

BUNDLED_SKILLS = [skill.name for skill in bundled_skills() if isinstance(skill, Skill)]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

pytestmark = pytest.mark.asyncio(loop_scope="module")

Shared = tuple[Editor, ClientSideConnection]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(model, tmp_path_factory) -> AsyncIterator[Shared]:
    """One editor connected to one agent for the tests that need no agent of their own (~2 s each)."""
    editor = Editor()
    async with editing(editor, model.url, tmp_path_factory.mktemp("config")) as conn:
        yield editor, conn


@pytest.fixture
def connected(shared: Shared) -> Shared:
    editor, conn = shared
    editor.reset()
    return editor, conn


def calls(*tool_calls: tuple[str, dict]) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in tool_calls]}


def tool_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def finals(editor: Editor) -> list[ToolCallProgress]:
    return [u for u in editor.of_kind("tool_call_update") if u.status in ("completed", "failed")]


async def open_session(conn, workspace) -> str:
    return (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id


async def test_the_model_reads_the_unsaved_buffer_and_the_edit_goes_to_the_editor(model, workspace, connected):
    (workspace / "main.tf").write_text('resource "aws_vpc" "on_disk" {}\n')
    editor, conn = connected
    editor.reset(buffers={workspace / "main.tf": 'resource "aws_vpc" "unsaved" {}\n'})
    model.add(
        calls(("read_file", {"path": "main.tf"})),
        calls(("edit_file", {"path": "main.tf", "old_string": "unsaved", "new_string": "main"})),
        {"text": "Renamed."},
    )
    session_id = await open_session(conn, workspace)
    response = await conn.prompt(session_id=session_id, prompt=[text_block("rename the VPC")])
    assert response.stop_reason == "end_turn"
    assert '"unsaved"' in tool_texts(model.requests[1])[0], "the model read the buffer, not the disk"
    assert editor.buffers[str(workspace / "main.tf")] == 'resource "aws_vpc" "main" {}\n'
    assert (workspace / "main.tf").read_text() == 'resource "aws_vpc" "on_disk" {}\n', "saving is the editor's job"
    assert editor.log.count("fs/write_text_file") == 1 and len(editor.permissions) == 1
    (diff,) = finals(editor)[-1].content or []
    assert isinstance(diff, FileEditToolCallContent) and '"unsaved"' in (diff.old_text or "")


async def test_bash_runs_in_an_editor_terminal_shown_live_then_waited_for_and_released(model, workspace, connected):
    command = "echo planning; sleep 0.5; echo done"
    model.add(calls(("bash", {"command": command})), {"text": "Validated."})
    editor, conn = connected
    session_id = await open_session(conn, workspace)
    response = await conn.prompt(session_id=session_id, prompt=[text_block("validate")])
    assert response.stop_reason == "end_turn"
    (created,) = editor.created
    # the line, started under the agent's reaper when the terminal runs on this machine
    assert (created["command"], created["args"], created["cwd"]) == (
        "bash",
        contained_in_terminal(command),
        str(workspace),
    )
    assert "PATH" in created["env"] and "IAC_CODE_API_KEY" not in created["env"], "no model key in the terminal"
    assert editor.shown_running == [True], "the terminal was on the tool call while the command ran"
    lifecycle = [m for m in editor.log if m != "terminal/output"]
    assert lifecycle == ["terminal/create", "terminal/wait_for_exit", "terminal/release"]
    final = finals(editor)[-1]
    assert final.status == "completed" and final.content == [
        TerminalToolCallContent(type="terminal", terminal_id="term-1")
    ]
    assert tool_texts(model.requests[1]) == ["planning\ndone\nExit code: 0"]


async def test_cancel_kills_the_terminal_releases_it_and_ends_the_call(model, workspace, connected):
    model.add(calls(("bash", {"command": "sleep 60"})), {"text": "after"})
    editor, conn = connected
    session_id = await open_session(conn, workspace)
    turn = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
    await asyncio.wait_for(editor.terminal_shown.wait(), 15)
    await conn.cancel(session_id=session_id)
    response = await asyncio.wait_for(turn, 10)
    assert response.stop_reason == "cancelled"
    lifecycle = [m for m in editor.log if m != "terminal/output"]
    assert lifecycle == ["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]
    assert await asyncio.wait_for(editor.terminals["term-1"].process.wait(), 5) < 0
    final = finals(editor)[-1]
    assert final.status == "failed" and final.raw_output == {"reason": "cancelled"}


async def test_bypass_mode_writes_and_runs_without_asking(model, workspace, connected):
    model.add(
        calls(("write_file", {"path": "main.tf", "content": "# new\n"})),
        calls(("bash", {"command": "echo validated"})),
        {"text": "Done."},
    )
    editor, conn = connected
    editor.reset(answer=lambda tool_call, options: "reject_once")  # any question would be refused
    session_id = await open_session(conn, workspace)
    await conn.set_session_mode(session_id=session_id, mode_id="bypass-permissions")
    response = await conn.prompt(session_id=session_id, prompt=[text_block("write and check")])
    assert response.stop_reason == "end_turn" and editor.permissions == []
    assert editor.buffers[str(workspace / "main.tf")] == "# new\n" and not (workspace / "main.tf").exists()
    assert [u.status for u in finals(editor)] == ["completed", "completed"]
    assert tool_texts(model.requests[2]) == ["Created main.tf (1 lines).", "validated\nExit code: 0"]


async def test_plan_updates_live_and_again_on_load(model, workspace, tmp_path):
    first = [{"content": "Write main.tf", "status": "in_progress"}, {"content": "Validate", "status": "pending"}]
    second = [{"content": "Write main.tf", "status": "completed"}, {"content": "Validate", "status": "in_progress"}]
    model.add(calls(("update_plan", {"entries": first})), calls(("update_plan", {"entries": second})), {"text": "ok"})
    editor = Editor()
    async with editing(editor, model.url, tmp_path / "config") as conn:
        session_id = await open_session(conn, workspace)
        await conn.prompt(session_id=session_id, prompt=[text_block("plan then work")])
    plans = editor.of_kind("plan")
    assert [[(e.content, e.status) for e in plan.entries] for plan in plans] == [
        [("Write main.tf", "in_progress"), ("Validate", "pending")],
        [("Write main.tf", "completed"), ("Validate", "in_progress")],
    ]
    for plan in plans:  # each right after its call's final update
        assert editor.updates[editor.updates.index(plan) - 1].status == "completed"

    reloaded = Editor()
    async with editing(reloaded, model.url, tmp_path / "config") as conn:
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    (plan,) = reloaded.of_kind("plan")
    assert plan.entries == plans[-1].entries
    replayed = [u for u in reloaded.updates if u.session_update != "available_commands_update"]
    assert replayed[-1] is plan, "the plan as it stood at the end, after the history"


async def test_an_image_reaches_the_model_comes_back_on_load_and_a_text_only_model_gets_a_marker(
    model, workspace, tmp_path
):
    model.add({"text": "The plan failed on the NAT gateway."}, {"text": "Add a route."})
    editor = Editor()
    async with editing(editor, model.url, tmp_path / "config", IAC_CODE_IMAGES="1") as conn:
        session_id = await open_session(conn, workspace)
        blocks = [text_block("Why did this fail?"), image_block(PNG, "image/png")]
        await conn.prompt(session_id=session_id, prompt=blocks)
    (sent,) = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert sent[0] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}

    reloaded = Editor()  # the user then says the model takes no images
    async with editing(reloaded, model.url, tmp_path / "config", IAC_CODE_IMAGES="0") as conn:
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        response = await conn.prompt(session_id=session_id, prompt=[text_block("And the fix?")])
    shown = [u.content for u in reloaded.of_kind("user_message_chunk")]
    assert shown[0].text == "Why did this fail?"
    assert isinstance(shown[1], ImageContentBlock) and (shown[1].mime_type, shown[1].data) == ("image/png", PNG)
    assert response.stop_reason == "end_turn"
    first = next(m for m in model.requests[1]["messages"] if m["role"] == "user")
    assert first["content"] == "Why did this fail?\n[image: image/png (not shown: this model does not read images)]"


async def test_custom_commands_and_the_users_instructions(model, workspace, tmp_path):
    config = tmp_path / "config"
    (workspace / ".iac-code" / "commands").mkdir(parents=True)
    (workspace / ".iac-code" / "commands" / "review.md").write_text(
        "---\ndescription: Review a module for security\nargument-hint: <module path>\n---\n"
        "Review the module at $ARGUMENTS for security problems.\n"
    )
    (config / "commands").mkdir(parents=True)
    (config / "commands" / "explain.md").write_text("Explain this repository's layout.\n")
    (config / "AGENTS.md").write_text("Always tag resources with an owner.\n")
    model.add({"text": "Reviewed."})
    editor = Editor()
    async with editing(editor, model.url, config) as conn:
        session_id = await open_session(conn, workspace)
        for _ in range(100):  # the list follows the session/new response
            if editor.of_kind("available_commands_update"):
                break
            await asyncio.sleep(0.05)
        await conn.prompt(session_id=session_id, prompt=[text_block("/review modules/vpc")])
    (listed,) = editor.of_kind("available_commands_update")
    commands = {c.name: c for c in listed.available_commands}
    assert list(commands) == [
        "compact",
        "clear",
        "help",
        "check",
        "status",
        "cost",
        "permissions",
        "preview",
        "init",
        "explain",
        "review",
        *BUNDLED_SKILLS,
    ]
    assert commands["review"].input is not None and commands["review"].input.root.hint == "<module path>"
    messages = model.requests[0]["messages"]
    assert messages[-1] == {"role": "user", "content": "Review the module at modules/vpc for security problems."}
    assert "Always tag resources with an owner." in messages[0]["content"], "the user's own AGENTS.md"


async def test_a_sub_agents_steps_show_on_its_agent_call(model, workspace, connected):
    editor, conn = connected
    editor.reset(buffers={workspace / "main.tf": 'resource "aws_vpc" "unsaved" {}\n'})
    model.add(
        calls(("agent", {"description": "Find VPCs", "prompt": "List every VPC in main.tf"})),
        calls(("read_file", {"path": "main.tf"})),  # the sub-agent
        {"text": "One VPC: unsaved."},  # its answer
        {"text": "There is one VPC."},
    )
    session_id = await open_session(conn, workspace)
    await conn.prompt(session_id=session_id, prompt=[text_block("find the VPCs")])
    (start,) = [u for u in editor.updates if isinstance(u, ToolCallStart)]
    progress = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == start.tool_call_id and u.content]
    steps = [u.content[0].content.text for u in progress if u.status is None]
    assert steps[-1] == "✓ Read main.tf" and len(steps) >= 2
    assert editor.log == ["fs/read_text_file"], "the sub-agent reads through the editor too"
    assert finals(editor)[-1].raw_output == "One VPC: unsaved."


async def test_a_cancelled_permission_ends_its_tool_call_failed(model, workspace, connected):
    model.add(calls(("write_file", {"path": "main.tf", "content": "x"})))
    editor, conn = connected
    editor.reset(answer=lambda tool_call, options: None)  # the user dismissed the question
    session_id = await open_session(conn, workspace)
    response = await conn.prompt(session_id=session_id, prompt=[text_block("write")])
    assert response.stop_reason == "cancelled" and "fs/write_text_file" not in editor.log
    (final,) = finals(editor)
    assert final.tool_call_id == editor.permissions[0].tool_call_id
    assert final.status == "failed" and final.raw_output == {"reason": "cancelled"}


async def test_an_editor_without_fs_methods_is_read_and_written_on_disk(model, workspace, tmp_path):
    class PlainEditor(Editor):
        read_text_file = None  # the SDK then answers "method not found"
        write_text_file = None

    (workspace / "main.tf").write_text("on disk\n")
    model.add(calls(("read_file", {"path": "main.tf"})), calls(("read_file", {"path": "main.tf"})), {"text": "ok"})
    editor = PlainEditor()
    async with editing(editor, model.url, tmp_path / "config") as conn:
        session_id = await open_session(conn, workspace)
        await conn.prompt(session_id=session_id, prompt=[text_block("read twice")])
    assert tool_texts(model.requests[1]) + tool_texts(model.requests[2])[1:] == ["     1\ton disk"] * 2


async def test_capabilities_the_client_does_not_advertise_are_not_used(model, workspace, tmp_path):
    (workspace / "main.tf").write_text("on disk\n")
    model.add(calls(("read_file", {"path": "main.tf"}), ("bash", {"command": "echo local"})), {"text": "ok"})
    editor = Editor(buffers={workspace / "main.tf": "buffer\n"})
    async with editing(editor, model.url, tmp_path / "config", capabilities=ClientCapabilities()) as conn:
        session_id = await open_session(conn, workspace)
        await conn.prompt(session_id=session_id, prompt=[text_block("go")])
    assert editor.log == [] and tool_texts(model.requests[1]) == ["     1\ton disk", "local\nExit code: 0"]
