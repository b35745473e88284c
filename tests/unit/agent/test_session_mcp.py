"""SessionMcp with a stand-in hub: the first turn's bounded wait, prompt commands, problems told once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from iac_code.agent.session_commands import CommandError, CommandInfo
from iac_code.agent.session_mcp import SessionMcp
from iac_code.mcp import FIRST_TURN_WAIT, PromptError
from iac_code.mcp.prompts import PromptCommand, RenderedPrompt
from iac_code.messages import Message


class FakeHub:
    def __init__(self, on_problem: Any, on_change: Any, ready_after: float) -> None:
        self.on_problem, self.on_change = on_problem, on_change
        self.ready_after = ready_after
        self.waits: list[float] = []
        self.started = self.closed = False
        self.offered: list[PromptCommand] = []

    def prompts(self) -> list[PromptCommand]:
        return self.offered

    def start(self) -> None:
        self.started = True

    async def wait_ready(self, timeout: float) -> bool:
        self.waits.append(timeout)
        await asyncio.sleep(self.ready_after)
        return True

    async def render_prompt(self, name: str, args: str) -> RenderedPrompt:
        if name != "mcp__tf__review":
            raise PromptError(f"/{name} is not a prompt of a connected MCP server")
        return RenderedPrompt(f"Review {args}", [])

    async def aclose(self) -> None:
        self.closed = True


class Recorder:
    def __init__(self, ready_after: float = 0.0) -> None:
        self.told: list[str] = []
        self.changes = 0
        self.hub: FakeHub | None = None
        self.ready_after = ready_after

    def make_hub(self, on_problem: Any, on_change: Any) -> FakeHub:
        self.hub = FakeHub(on_problem, on_change, self.ready_after)
        return self.hub

    async def tell(self, text: str) -> None:
        self.told.append(text)

    async def changed(self) -> None:
        self.changes += 1

    def session_mcp(self) -> SessionMcp:
        return SessionMcp(self.make_hub, self.tell, self.changed)  # type: ignore[arg-type]


async def test_only_the_first_turn_waits_and_plain_text_passes_through():
    recorder = Recorder()
    mcp = recorder.session_mcp()
    mcp.start()
    message = Message(role="user", text="/help me with main.tf")
    assert await mcp.prepare(message, asyncio.Event()) is message
    assert await mcp.prepare(message, asyncio.Event()) is message
    assert recorder.hub is not None and recorder.hub.started and recorder.hub.waits == [FIRST_TURN_WAIT]


async def test_a_cancel_ends_the_wait_at_once():
    recorder = Recorder(ready_after=30)
    mcp = recorder.session_mcp()
    cancelled = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, cancelled.set)
    message = Message(role="user", text="/mcp__tf__review x")
    assert await asyncio.wait_for(mcp.prepare(message, cancelled), 1) is message  # the loop then ends cancelled


async def test_a_prompt_command_becomes_the_rendered_text_and_a_failure_is_a_command_error():
    recorder = Recorder()
    mcp = recorder.session_mcp()
    prepared = await mcp.prepare(Message(role="user", text="  /mcp__tf__review aws_s3_bucket.logs\n"), asyncio.Event())
    assert prepared is not None and prepared.text == "Review aws_s3_bucket.logs"
    with pytest.raises(CommandError) as failure:
        await mcp.prepare(Message(role="user", text="/mcp__tf__nope"), asyncio.Event())
    assert str(failure.value) == "[MCP] /mcp__tf__nope is not a prompt of a connected MCP server\n"
    assert recorder.told == [], "the session shows a failed command; the wiring tells only problems"


async def test_problems_are_told_and_nothing_is_told_after_close():
    recorder = Recorder()
    mcp = recorder.session_mcp()
    assert recorder.hub is not None
    await recorder.hub.on_problem("tf", "MCP server 'tf' is unavailable: it exited (code 1) before it was ready")
    await recorder.hub.on_change()
    mcp.release()  # dropped without a close: the hub closes in the background
    await asyncio.sleep(0)
    assert recorder.hub.closed
    await recorder.hub.on_problem("tf", "late")
    await recorder.hub.on_change()
    assert recorder.told == ["MCP server 'tf' is unavailable: it exited (code 1) before it was ready"]
    assert recorder.changes == 1


async def test_a_session_without_a_hub_offers_nothing():
    mcp = SessionMcp(None, Recorder().tell, Recorder().changed)
    mcp.start()
    message = Message(role="user", text="/mcp__tf__review x")
    assert await mcp.prepare(message, asyncio.Event()) is message
    assert mcp.tools() == [] and mcp.available_commands() == []
    await mcp.aclose()


async def test_the_ready_servers_prompts_are_listed_as_neutral_commands():
    recorder = Recorder()
    mcp = recorder.session_mcp()
    assert recorder.hub is not None
    review = PromptCommand("mcp__tf__review", "tf", "review", "Review (MCP server tf)", ())
    recorder.hub.offered = [review]
    assert mcp.available_commands() == [CommandInfo("mcp__tf__review", "Review (MCP server tf)", "")]
