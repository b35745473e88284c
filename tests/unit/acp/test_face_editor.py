"""Session in-process, for what issue 10 wired into it: slash commands (session commands, /init, custom
Markdown commands, other prompt sources), plan updates, the editor backend, and cancelled calls ending."""

from __future__ import annotations

from pathlib import Path

from acp.helpers import image_block, text_block
from tests.unit.acp.test_face import Live, ScriptedPeer, loop_factory, prompt, session
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, say, workspace_at

from iac_code.acp.face import AcpFace
from iac_code.agent import session as core_module
from iac_code.agent.commands import INIT_PROMPT
from iac_code.agent.loop import CANCELLED
from iac_code.agent.session import SessionCore
from iac_code.agent.session_commands import CommandError, CommandInfo, SessionCommand
from iac_code.skills.discovery import bundled_skills
from iac_code.skills.skill_file import Skill
from iac_code.tools.update_plan import UpdatePlanTool

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def command_file(workspace: Path, name: str, text: str) -> None:
    directory = workspace / ".iac-code" / "commands"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(text)


def updates(peer: ScriptedPeer, kind: str) -> list[dict]:
    return [m for m in peer.seen if m.get("sessionUpdate") == kind]


async def test_a_custom_command_runs_its_rendered_prompt_as_a_turn_and_keeps_the_images(tmp_path):
    command_file(tmp_path, "review", "---\ndescription: Review a module\n---\nReview $ARGUMENTS for security.\n")
    provider, peer = FakeProvider(say("looks fine")), ScriptedPeer()
    live = session(tmp_path, peer, provider, [])
    live.reads_images = True
    blocks = [text_block("/review modules/vpc"), image_block(PNG, "image/png")]
    response = await live.prompt(blocks)
    assert response.stop_reason == "end_turn"
    sent = provider.calls[0][-1]
    assert sent.text == "Review modules/vpc for security." and [i.mime_type for i in sent.images] == ["image/png"]


async def test_init_asks_the_model_to_write_an_agents_md(tmp_path):
    provider = FakeProvider(say("I will explore first."))
    live = session(tmp_path, ScriptedPeer(), provider, [])
    await live.prompt(prompt("/init focus on the Helm charts"))
    assert provider.calls[0][-1].text == INIT_PROMPT.replace("$ARGUMENTS", "focus on the Helm charts")


async def test_an_unknown_slash_word_goes_to_the_model_as_typed(tmp_path):
    provider = FakeProvider(say("ok"))
    live = session(tmp_path, ScriptedPeer(), provider, [])
    await live.prompt(prompt("/etc/hosts has the wrong entry"))
    await live.prompt(prompt("/nope please"))
    assert [calls[-1].text for calls in provider.calls] == ["/etc/hosts has the wrong entry", "/nope please"]


class BrokenPrompts:
    """A prompt source (as MCP prompts are) whose command cannot render."""

    def available(self) -> list[CommandInfo]:
        return [CommandInfo("mcp__tf__review", "Review (MCP server tf)")]

    async def render(self, name: str, arguments: str) -> str | None:
        if name != "mcp__tf__review":
            return None
        raise CommandError("/mcp__tf__review needs file. Usage: /mcp__tf__review <file>")


async def test_other_prompt_sources_are_listed_and_their_errors_shown(tmp_path):
    peer, provider = ScriptedPeer(), FakeProvider()
    live = session(tmp_path, peer, provider, [])
    live.core.prompt_commands.append(BrokenPrompts())
    await live.core.announce_commands()
    (listed,) = updates(peer, "available_commands_update")
    names = [c["name"] for c in listed["availableCommands"]]
    bundled = [skill.name for skill in bundled_skills() if isinstance(skill, Skill)]
    own = ["compact", "clear", "help", "check", "status", "cost", "permissions", "preview"]
    assert names == [*own, "init", *bundled, "mcp__tf__review"]
    response = await live.prompt(prompt("/mcp__tf__review"))
    assert response.stop_reason == "end_turn" and provider.calls == []
    assert updates(peer, "agent_message_chunk")[-1]["content"]["text"].startswith("/mcp__tf__review needs file")


async def test_one_registry_entry_adds_a_session_command(tmp_path, monkeypatch):
    seen: list[str] = []

    async def check(core: core_module.SessionCore, arguments: str) -> None:
        seen.append(arguments)
        await core.say("2 findings")

    monkeypatch.setitem(core_module.COMMANDS, "check", SessionCommand("Check the IaC", check))
    peer, provider = ScriptedPeer(), FakeProvider()
    live = session(tmp_path, peer, provider, [])
    await live.prompt(prompt("/check modules"))
    await live.prompt(prompt("/help"))
    assert seen == ["modules"] and provider.calls == []
    first, help_text = (u["content"]["text"] for u in updates(peer, "agent_message_chunk"))
    assert first == "2 findings" and "/check: Check the IaC" in help_text and "/init: " in help_text


async def test_a_plan_update_follows_the_update_plan_call_result(tmp_path):
    entries = [{"content": "Write main.tf", "status": "in_progress", "priority": "high"}]
    peer = ScriptedPeer()
    provider = FakeProvider(call("update_plan", entries=entries), say("working on it"))
    live = session(tmp_path, peer, provider, [UpdatePlanTool()])
    await live.prompt(prompt("plan it"))
    assert peer.kinds() == ["tool_call", "tool_call_update", "tool_call_update", "plan", "agent_message_chunk"]
    assert updates(peer, "plan") == [{"sessionUpdate": "plan", "entries": entries}]


async def test_a_cancelled_permission_ends_its_tool_call_failed(tmp_path):
    """Issue 11, item 22: the call asked about must not stay pending in the client."""

    class CancellingPeer(ScriptedPeer):
        async def request_permission(self, request):
            self.seen.append({"permission": request.model_dump(mode="json", by_alias=True, exclude_none=True)})
            return {"outcome": {"outcome": "cancelled"}}

    writer = FakeTool("write", category="write", kind="edit")
    peer = CancellingPeer()
    live = session(tmp_path, peer, FakeProvider(call("write")), [writer])
    response = await live.prompt(prompt("write"))
    assert response.stop_reason == "cancelled" and writer.runs == []
    assert peer.kinds() == ["tool_call", "permission", "tool_call_update"]
    (final,) = updates(peer, "tool_call_update")
    assert final["toolCallId"] == "c1" and final["status"] == "failed"
    assert final["rawOutput"] == {"reason": "cancelled"}
    assert final["content"] == [{"type": "content", "content": {"type": "text", "text": CANCELLED}}]


async def test_the_session_backend_reaches_the_tools(tmp_path):
    class Backend:
        workspace = tmp_path

    backend = Backend()
    seen = []

    class Probe(FakeTool):
        async def run(self, args, ctx):
            seen.append(ctx.io)
            return await super().run(args, ctx)

    provider = FakeProvider(call("probe"), say("ok"))

    make_loop = loop_factory(provider, [Probe("probe")], tmp_path)
    peer = ScriptedPeer()
    live = Live(SessionCore("s1", workspace_at(tmp_path), AcpFace("s1", peer), make_loop, io=backend), peer)
    await live.prompt(prompt("go"))
    assert seen == [backend]
