"""The system prompt as the loop sends it: the workspace summary joins before the first model call without
holding up the loop's construction, and the mode's instructions count from the next model call; a sub-agent
asks with its parent's prompt and model as they are then, without the mode. Also a turn of one call made on
the user's behalf (/check)."""

import asyncio
from concurrent.futures import Future
from typing import Any

from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.events import ToolFinished, ToolRunning, ToolUseStart, TurnEnd
from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.agent.system_prompt import PLAN_MODE, mode_instructions
from iac_code.messages import ToolCall
from iac_code.tools.base import ToolContext, ToolResult


class PromptRecorder(FakeProvider):
    """A FakeProvider that also keeps the system prompt, the model and the answer's limit of each model call."""

    def __init__(self, *script: Any) -> None:
        super().__init__(*script)
        self.systems: list[str] = []
        self.asked: list[tuple[str, int]] = []  # (model, max_tokens)

    def stream(self, system, history, tools, *, max_tokens, cache_key=""):
        self.systems.append(system)
        self.asked.append((self.model, max_tokens))
        return super().stream(system, history, tools, max_tokens=max_tokens)


def base_loop(provider: FakeProvider, tools=(), **collaborators: Any) -> AgentLoop:
    return make_loop(provider, tools, config=LoopConfig(system_prompt="BASE"), **collaborators)


async def drain(events) -> list[Any]:
    return [event async for event in events]


async def test_the_workspace_summary_joins_the_prompt_before_the_first_model_call() -> None:
    summary: Future[str] = Future()
    provider = PromptRecorder(say("one"), say("two"))
    loop = base_loop(provider, workspace_summary=summary)  # built while the summary is still being found
    turn = asyncio.ensure_future(drain(loop.run("hi")))
    await asyncio.sleep(0.05)
    assert provider.systems == []  # the model call waits for it
    summary.set_result("Infrastructure found in the workspace: main.tf")
    await turn
    await drain(loop.run("again"))
    assert provider.systems == ["BASE\n\nInfrastructure found in the workspace: main.tf"] * 2


async def test_an_empty_summary_leaves_the_prompt_as_it_is() -> None:
    summary: Future[str] = Future()
    summary.set_result("")
    provider = PromptRecorder(say("one"))
    await drain(base_loop(provider, workspace_summary=summary).run("hi"))
    assert provider.systems == ["BASE"]


async def test_a_turn_cancelled_while_waiting_for_the_summary_leaves_it_for_the_next() -> None:
    summary: Future[str] = Future()
    provider = PromptRecorder(say("one"))
    loop = base_loop(provider, workspace_summary=summary)
    turn = asyncio.ensure_future(drain(loop.run("hi")))
    await asyncio.sleep(0.05)
    loop.cancel()
    events = await turn
    assert isinstance(events[-1], TurnEnd) and events[-1].stop_reason == "cancelled"
    assert not summary.cancelled()
    summary.set_result("SUMMARY")
    await drain(loop.run("again"))
    assert provider.systems == ["BASE\n\nSUMMARY"]


class Delegates(FakeTool):
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        assert ctx.run_subagent is not None
        return ToolResult(await ctx.run_subagent(args["prompt"]))


async def test_a_sub_agent_asks_with_the_prompt_and_model_as_they_are_now_and_without_the_mode() -> None:
    summary: Future[str] = Future()
    summary.set_result("SUMMARY")
    provider = PromptRecorder(call("agent", prompt="look"), say("seen"), say("done"))
    config = LoopConfig(system_prompt="BASE", mode_instructions=PLAN_MODE, model="first", max_tokens=123)
    loop = make_loop(provider, [Delegates("agent")], config=config, workspace_summary=summary)
    loop.set_model("second")  # the session switched models after the loop was built
    await drain(loop.run("delegate"))
    parent = f"BASE\n\nSUMMARY\n\n{PLAN_MODE}"
    assert provider.systems == [parent, "BASE\n\nSUMMARY", parent]
    assert provider.asked == [("second", 123)] * 3


class SwitchMode:
    """A tool whose run switches the session's mode, as a client's set_mode would mid-turn."""

    name = "switch"
    category = "read"
    kind = "other"
    description = "switch"
    parameters: dict[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.loop: AgentLoop | None = None

    def title(self, args: dict[str, Any]) -> str:
        return "switch"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    def access(self, args: dict[str, Any]) -> str:
        return "read"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        assert self.loop is not None
        self.loop.mode_instructions = mode_instructions("plan")
        return ToolResult("switched")


async def test_the_mode_instructions_count_from_the_next_model_call() -> None:
    switch = SwitchMode()
    provider = PromptRecorder(call("switch"), say("a plan"), say("back"))
    loop = base_loop(provider, [switch])
    switch.loop = loop
    await drain(loop.run("plan it"))
    loop.mode_instructions = mode_instructions("default")
    await drain(loop.run("do it"))
    assert provider.systems == ["BASE", f"BASE\n\n{PLAN_MODE}", "BASE"]
    assert mode_instructions("default") == mode_instructions("bypass-permissions") == ""


async def test_a_call_on_the_users_behalf_runs_without_the_model_and_stays_in_the_history() -> None:
    provider = PromptRecorder()
    tool = FakeTool("iac_check")
    loop = base_loop(provider, [tool])
    events = await drain(loop.run("/check", tool_call=ToolCall("check_1", "iac_check", {"path": "."})))
    assert provider.systems == []
    kinds = [type(e) for e in events if isinstance(e, ToolUseStart | ToolRunning | ToolFinished | TurnEnd)]
    assert kinds == [ToolUseStart, ToolRunning, ToolFinished, TurnEnd]
    assert isinstance(events[-1], TurnEnd) and events[-1].stop_reason == "end_turn"
    assert tool.runs == [{"path": "."}]
    assert [(m.role, m.text) for m in loop.history] == [("user", "/check"), ("assistant", ""), ("tool", "iac_check ok")]
    assert loop.history[1].tool_calls == [ToolCall("check_1", "iac_check", {"path": "."})]
