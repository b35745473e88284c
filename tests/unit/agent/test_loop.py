import asyncio
import time
from pathlib import Path

import pytest
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.events import (
    ErrorReport,
    PermissionRequest,
    Step,
    SubagentSteps,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.agent.loop import CANCELLED, LoopConfig
from iac_code.agent.policy import PERMISSION_DENIED, decide
from iac_code.messages import Message, ToolCall, thought_id, unanswered_tool_calls
from iac_code.providers.base import Finish, ProviderAuthError, ProviderError, ThinkingDelta, ToolCallReady
from iac_code.providers.base import TextDelta as Delta
from iac_code.redaction import Redactor, Values
from iac_code.tools.base import Terminal


def ask_as_default_mode(call):
    return decide(call.access, "default", None)


async def collect(aiter, answer=None):
    """Every event of the turn; permission requests are answered by `answer(request)` (a coroutine;
    None leaves the request unanswered)."""
    events = []
    async for event in aiter:
        events.append(event)
        if isinstance(event, PermissionRequest) and (choice := await answer(event)) is not None:
            event.resolve(choice)
    return events


async def test_plain_answer_ends_turn_with_usage():
    loop = make_loop(FakeProvider(say("hello", input_tokens=7)))
    events = await collect(loop.run("hi"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello"]
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.stop_reason == "end_turn"
    assert (end.usage.input_tokens, end.usage.output_tokens) == (7, 5)
    assert any(isinstance(e, UsageReport) for e in events)
    assert [m.role for m in loop.history] == ["user", "assistant"]


async def test_tool_result_reaches_the_next_model_call():
    provider = FakeProvider(call("look", path="a"), say("done"))
    tool = FakeTool("look")
    loop = make_loop(provider, [tool])
    events = await collect(loop.run("go"))
    assert tool.runs == [{"path": "a"}]
    kinds = [type(e).__name__ for e in events if isinstance(e, (ToolUseStart, ToolRunning, ToolFinished))]
    assert kinds == ["ToolUseStart", "ToolRunning", "ToolFinished"]
    second_call = provider.calls[1]
    assert second_call[-1].role == "tool" and second_call[-1].text == "look ok"


async def test_denied_write_tool_does_not_run_and_model_is_told():
    asked = []

    async def deny(request):
        asked.append(request.call.name)
        return "reject_once"

    writer = FakeTool("write", category="write", kind="edit")
    reader = FakeTool("look")
    provider = FakeProvider(call("write"), call("look", "c2"), say("ok"))
    loop = make_loop(provider, [writer, reader], judge=ask_as_default_mode)
    events = await collect(loop.run("go"), deny)
    assert asked == ["write"], "read-only tools must not ask"
    assert writer.runs == [] and reader.runs == [{}]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].result.is_error and finished[0].result.text == PERMISSION_DENIED
    assert not any(isinstance(e, ToolRunning) and e.call.name == "write" for e in events)


async def test_read_calls_in_one_step_run_in_parallel_and_results_keep_call_order():
    tool = FakeTool("look", delay=0.05)
    calls = [ToolCallReady(ToolCall(f"c{i}", "look", {"i": i})) for i in range(4)]
    loop = make_loop(FakeProvider([*calls, Finish("tool_use")], say("ok")), [tool])
    await collect(loop.run("go"))
    assert tool.max_concurrent == 4
    results = [m.tool_call_id for m in loop.history if m.role == "tool"]
    assert results == ["c0", "c1", "c2", "c3"]


async def test_write_calls_run_one_by_one():
    tool = FakeTool("write", category="write", kind="edit", delay=0.02)
    calls = [ToolCallReady(ToolCall(f"c{i}", "write", {})) for i in range(3)]
    loop = make_loop(FakeProvider([*calls, Finish("tool_use")], say("ok")), [tool])
    await collect(loop.run("go"))
    assert tool.max_concurrent == 1 and len(tool.runs) == 3


async def test_turn_limit_gives_max_turn_requests_and_a_valid_history():
    loop = make_loop(
        FakeProvider(*[call("look", f"c{i}") for i in range(5)]), [FakeTool("look")], config=LoopConfig(max_turns=2)
    )
    events = await collect(loop.run("go"))
    assert events[-1].stop_reason == "max_turn_requests"
    assert unanswered_tool_calls(loop.history) == []


@pytest.mark.parametrize("reason", ["max_tokens", "refusal"])
async def test_model_finish_reasons_become_stop_reasons(reason):
    loop = make_loop(FakeProvider([Delta("partial"), Finish(reason)]))
    events = await collect(loop.run("go"))
    assert events[-1].stop_reason == reason


async def test_tool_calls_cut_by_the_output_limit_are_answered():
    script = [ToolCallReady(ToolCall("c1", "look", {})), Finish("max_tokens")]
    loop = make_loop(FakeProvider(script), [FakeTool("look")])
    events = await collect(loop.run("go"))
    assert events[-1].stop_reason == "max_tokens"
    assert unanswered_tool_calls(loop.history) == []


async def test_provider_error_is_reported_and_the_turn_ends():
    loop = make_loop(FakeProvider(ProviderAuthError("authentication failed for provider fake")))
    events = await collect(loop.run("go"))
    assert isinstance(events[-2], ErrorReport) and "authentication failed" in events[-2].message
    assert events[-1].stop_reason == "error"
    assert events[-1].error == ErrorReport("authentication failed for provider fake", "auth")


async def test_a_failed_model_call_ends_the_turn_with_its_words_redacted_after_keeping_what_was_said():
    secret = "sk-live-0123456789abcdef"
    failing = ProviderError(f"fake returned HTTP 500: upstream rejected {secret}")
    loop = make_loop(FakeProvider([Delta("Looking first."), *call("look")], failing), [FakeTool("look")])
    loop.redactor = Redactor([Values({"IAC_CODE_API_KEY": secret})])
    events = await collect(loop.run("go"))
    end = events[-1]
    assert end.stop_reason == "error" and end.error is not None and end.error.kind == "model"
    assert secret not in end.error.message and "HTTP 500: upstream rejected" in end.error.message
    assert [m.role for m in loop.history] == ["user", "assistant", "tool"]  # the first answer and its call stay
    assert loop.history[1].text == "Looking first."


async def test_every_appended_message_has_an_id_and_the_streamed_deltas_carry_their_messages():
    thinking = [ThinkingDelta("Hmm."), Delta("Let me look."), *call("look")]
    loop = make_loop(FakeProvider(thinking, say("Done.")), [FakeTool("look")])
    events = await collect(loop.run("go"))
    ids = [m.id for m in loop.history]
    assert all(ids) and len(set(ids)) == len(ids)
    first, second = (m for m in loop.history if m.role == "assistant")
    deltas = [(type(e).__name__, e.message_id) for e in events if isinstance(e, Delta | ThinkingDelta)]
    assert deltas == [
        ("ThinkingDelta", thought_id(first.id)),
        ("TextDelta", first.id),
        ("TextDelta", second.id),
    ]


async def test_unknown_tool_is_an_error_result_not_a_crash():
    loop = make_loop(FakeProvider(call("nope"), say("ok")))
    events = await collect(loop.run("go"))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].result.is_error and "Unknown tool" in finished[0].result.text
    assert events[-1].stop_reason == "end_turn"


async def test_cancel_mid_stream_stops_within_a_second_and_keeps_what_was_shown():
    loop = make_loop(FakeProvider([Delta("partial "), "hang"]))
    events = []

    async def consume():
        async for event in loop.run("go"):
            events.append(event)

    task = asyncio.create_task(consume())
    while not any(isinstance(e, TextDelta) for e in events):
        await asyncio.sleep(0.01)
    started = time.monotonic()
    loop.cancel()
    await asyncio.wait_for(task, 1.0)
    assert time.monotonic() - started < 1.0
    assert events[-1].stop_reason == "cancelled"
    shown = next(e for e in events if isinstance(e, TextDelta))
    assert loop.history[-1] == Message(
        role="assistant", id=shown.message_id, text="partial "
    )  # the id it was shown with
    assert not loop.running


async def test_cancel_mid_tool_answers_every_call_and_next_turn_works():
    slow = FakeTool("look", delay=30)
    calls = [ToolCallReady(ToolCall("c1", "look", {})), ToolCallReady(ToolCall("c2", "look", {}))]
    provider = FakeProvider([*calls, Finish("tool_use")], say("next"))
    loop = make_loop(provider, [slow])
    events = []

    async def consume():
        async for event in loop.run("go"):
            events.append(event)

    task = asyncio.create_task(consume())
    while slow.running_now < 2:
        await asyncio.sleep(0.01)
    loop.cancel()
    await asyncio.wait_for(task, 1.0)
    assert events[-1].stop_reason == "cancelled"
    results = [m for m in loop.history if m.role == "tool"]
    assert [m.text for m in results] == [CANCELLED, CANCELLED]
    assert [e.call.id for e in events if isinstance(e, ToolFinished)] == ["c1", "c2"]
    assert unanswered_tool_calls(loop.history) == []
    events = await collect(loop.run("again"))
    assert events[-1].stop_reason == "end_turn"


async def test_permission_answered_cancelled_cancels_the_turn():
    async def cancelled(request):
        return "cancelled"

    tool = FakeTool("write", category="write", kind="edit")
    loop = make_loop(FakeProvider(call("write")), [tool], judge=ask_as_default_mode)
    events = await collect(loop.run("go"), cancelled)
    assert events[-1].stop_reason == "cancelled" and tool.runs == []
    assert unanswered_tool_calls(loop.history) == []
    # the call the consumer was shown ends too: a client must not show it pending forever
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.call.id == "c1" and finished.result.is_error and finished.result.text == CANCELLED
    assert finished.result.shown is not None and finished.result.shown.raw_output == {"reason": "cancelled"}
    assert loop.history[-1] is finished.result, "the client is shown the record the history keeps"
    assert isinstance(events[-2], ToolFinished) and isinstance(events[-1], TurnEnd)


async def test_cancel_while_waiting_for_permission():
    waiting = asyncio.Event()

    async def slow_answer(request):
        waiting.set()  # the user has not answered yet

    tool = FakeTool("write", category="write", kind="edit")
    loop = make_loop(FakeProvider(call("write")), [tool], judge=ask_as_default_mode)
    task = asyncio.create_task(collect(loop.run("go"), slow_answer))
    await waiting.wait()
    loop.cancel()
    events = await asyncio.wait_for(task, 1.0)
    assert events[-1].stop_reason == "cancelled" and tool.runs == []


async def test_second_concurrent_run_is_refused():
    loop = make_loop(FakeProvider([Delta("x"), "hang"]))
    first = loop.run("one")
    await first.__anext__()
    with pytest.raises(RuntimeError):
        await loop.run("two").__anext__()
    loop.cancel()
    await first.aclose()


async def test_on_message_sees_every_appended_message_in_order():
    seen = []
    loop = make_loop(FakeProvider(call("look"), say("done")), [FakeTool("look")], on_message=seen.append)
    await collect(loop.run("go"))
    assert seen == loop.history
    assert [m.role for m in seen] == ["user", "assistant", "tool", "assistant"]


async def test_subagent_runs_its_own_loop_with_read_tools_only():
    provider = FakeProvider(
        call("agent", "p1", prompt="find it"),  # parent asks for a sub-agent
        call("look", "s1"),  # sub-agent uses a read tool
        say("found in main.tf"),  # sub-agent's answer
        say("the sub-agent says: found"),  # parent's final answer
    )

    class AgentTool(FakeTool):
        async def run(self, args, ctx):
            from iac_code.tools.base import ToolResult

            assert ctx.run_subagent is not None
            return ToolResult(await ctx.run_subagent(args["prompt"]))

    look = FakeTool("look")
    loop = make_loop(provider, [AgentTool("agent", category="execute", kind="execute"), look])
    events = await collect(loop.run("go"))
    assert events[-1].stop_reason == "end_turn"
    agent_result = next(m for m in loop.history if m.role == "tool" and m.tool_name == "agent")
    assert agent_result.text == "found in main.tf"
    assert look.runs == [{}]
    sub_call_tools = provider.calls[1]
    assert sub_call_tools[0].text == "find it", "the sub-agent starts from its task prompt alone"


async def test_a_bug_in_the_judge_ends_the_turn_with_a_valid_history():
    def broken(call):
        raise RuntimeError("bug")

    tool = FakeTool("write", category="write", kind="edit")
    loop = make_loop(FakeProvider(call("write"), say("after")), [tool], judge=broken)
    events = await collect(loop.run("go"))
    assert isinstance(events[-2], ErrorReport) and "Internal error" in events[-2].message
    assert events[-1].stop_reason == "error"
    assert tool.runs == [] and unanswered_tool_calls(loop.history) == []
    events = await collect(loop.run("again"))
    assert events[-1].stop_reason == "end_turn", "the session goes on"


async def test_a_permission_request_follows_its_tool_call_in_the_stream():
    writer = FakeTool("write", category="write", kind="edit")

    async def allow(request):
        return "allow_once"

    loop = make_loop(FakeProvider(call("write"), say("ok")), [writer], judge=ask_as_default_mode)
    events = await collect(loop.run("go"), allow)
    names = [type(e).__name__ for e in events if isinstance(e, (ToolUseStart, PermissionRequest, ToolRunning))]
    assert names == ["ToolUseStart", "PermissionRequest", "ToolRunning"]
    request = next(e for e in events if isinstance(e, PermissionRequest))
    assert (request.title, request.kind, request.infrastructure_change) == ("Fake write", "edit", False)
    assert writer.runs == [{}]


async def test_a_sub_agent_permission_request_flows_through_the_parent_stream_without_deadlock():
    provider = FakeProvider(
        call("agent", "p1", prompt="write it"),  # parent asks for a sub-agent
        call("write", "s1"),  # the sub-agent (given a write tool here) wants to write
        say("written"),  # sub-agent's answer
        say("done"),  # parent's final answer
    )

    class AgentTool(FakeTool):
        async def run(self, args, ctx):
            from iac_code.tools.base import ToolResult

            return ToolResult(await ctx.run_subagent(args["prompt"]))

    writer = FakeTool("write", category="write", kind="edit")
    loop = make_loop(
        provider,
        [AgentTool("agent", category="read", kind="execute"), writer],
        judge=ask_as_default_mode,
        config=LoopConfig(subagent_categories=frozenset({"read", "write"})),
    )
    asked = []

    async def allow(request):
        asked.append(request.call.id)
        return "allow_once"

    events = await asyncio.wait_for(collect(loop.run("go"), allow), 2.0)
    # its call is shown on its own, under an id namespaced by the parent call's: ids may repeat across loops
    assert asked == ["p1/s1"] and writer.runs == [{}]
    sub = [type(e).__name__ for e in events if getattr(e, "call", None) is not None and e.call.id == "p1/s1"]
    assert sub == ["ToolUseStart", "PermissionRequest", "ToolRunning", "ToolFinished"]
    # and its steps are the parent call's progress
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert {e.call.id for e in progress} == {"p1"}
    steps = [e.progress for e in progress]
    assert steps == [SubagentSteps((Step("Fake write", state),)) for state in ("pending", "in_progress", "completed")]
    assert events[-1].stop_reason == "end_turn"


async def test_extra_tools_are_asked_for_at_each_turn_and_never_replace_a_built_in():
    first, second = FakeTool("remote_a"), FakeTool("remote_b")
    offered = [first]
    provider = FakeProvider(call("remote_a"), say("one"), call("remote_b", call_id="c2"), say("two"))
    loop = make_loop(provider, [FakeTool("look")], extra_tools=lambda: offered)
    await collect(loop.run("first"))
    assert set(loop.tools) == {"look", "remote_a"} and first.runs == [{}]
    offered = [second, FakeTool("look", description="a server's tool named like a built-in")]
    await collect(loop.run("second"))
    assert set(loop.tools) == {"look", "remote_b"} and second.runs == [{}]
    assert loop.tools["look"].description == "a fake tool"


async def test_calls_the_model_never_got_to_announce_end_silently():
    """A reply cut off with calls in it: they get a result in the history, but no client saw them."""
    provider = FakeProvider([ToolCallReady(ToolCall("c1", "look", {})), Finish("end_turn")])
    loop = make_loop(provider, [FakeTool("look")])
    events = await collect(loop.run("go"))
    assert not [e for e in events if isinstance(e, (ToolUseStart, ToolFinished))]
    assert unanswered_tool_calls(loop.history) == []


async def test_a_tool_gets_the_loop_backend_and_reports_progress_on_its_own_call():
    class Backend:
        workspace = Path("/tmp")

    class Reporting(FakeTool):
        async def run(self, args, ctx):
            from iac_code.tools.base import ToolResult

            assert ctx.io is backend
            await ctx.progress(Terminal("t1"))
            return ToolResult("ran")

    backend = Backend()
    loop = make_loop(FakeProvider(call("run", "c1"), call("run", "c2"), say("ok")), [Reporting("run")])
    loop.io = backend
    events = await collect(loop.run("go"))
    progress = [(e.call.id, e.progress) for e in events if isinstance(e, ToolProgress)]
    assert progress == [("c1", Terminal("t1")), ("c2", Terminal("t1"))]


async def test_a_sub_agent_has_no_plan_of_its_own_and_shares_the_backend():
    seen = {}

    class AgentTool(FakeTool):
        async def run(self, args, ctx):
            from iac_code.tools.base import ToolResult

            return ToolResult(await ctx.run_subagent("look around"))

    class Look(FakeTool):
        async def run(self, args, ctx):
            seen["io"] = ctx.io
            return await super().run(args, ctx)

    provider = FakeProvider(call("agent", "p1"), call("look", "s1"), say("seen"), say("done"))
    tools = [AgentTool("agent", category="execute"), Look("look"), FakeTool("update_plan", kind="think")]
    loop = make_loop(provider, tools)
    await collect(loop.run("go"))
    assert provider.tool_names[0] == ["agent", "look", "update_plan"]
    assert provider.tool_names[1] == ["look"] and seen["io"] is loop.io


class AskingTool(FakeTool):
    """A read tool that, while running, asks for the workspace's code (as iac_check does)."""

    def __init__(self, name: str = "checker") -> None:
        super().__init__(name)
        self.answers: list[str | None] = []

    async def run(self, args, ctx):
        refusal = await ctx.request_access(f"{self.name}:plugins", "workspace_code", "start the plugins?")
        self.answers.append(refusal)
        return await super().run(args, ctx)


async def test_a_running_call_asks_under_its_own_subject_and_a_remembered_answer_is_found_by_it():
    remembered: dict[str, str] = {}
    judged: list[tuple[str, str]] = []

    def judge(call):
        judged.append((call.subject, call.access))
        return decide(call.access, "bypass-permissions", remembered.get(call.subject))

    async def always(request):
        remembered[request.subject] = "allow"
        return "allow_always"

    tool = AskingTool()
    loop = make_loop(FakeProvider(call("checker"), say("ok"), call("checker"), say("ok")), [tool], judge=judge)
    events = await collect(loop.run("go"), always)
    (asked,) = [e for e in events if isinstance(e, PermissionRequest)]
    assert asked.subject == "checker:plugins" and asked.title == "start the plugins?" and asked.call.id == "c1"
    assert "allow_always" in asked.options  # code the workspace ships may be allowed for the session
    events = await collect(loop.run("again"), always)
    assert [e for e in events if isinstance(e, PermissionRequest)] == []
    assert tool.answers == [None, None] and judged[-1] == ("checker:plugins", "workspace_code")


async def test_a_refused_access_is_the_tools_to_report():
    async def reject(request):
        return "reject_once"

    tool = AskingTool()
    loop = make_loop(FakeProvider(call("checker"), say("ok")), [tool], judge=ask_as_default_mode)
    await collect(loop.run("go"), reject)
    assert tool.answers == [PERMISSION_DENIED] and len(tool.runs) == 1


async def test_cancelling_a_running_calls_question_stops_the_turn_and_its_parallel_siblings():
    async def cancelled(request):
        return "cancelled"

    slow = FakeTool("slow", delay=30)
    asking = AskingTool()
    calls = [ToolCallReady(ToolCall("a", "slow", {})), ToolCallReady(ToolCall("b", "checker", {})), Finish("tool_use")]
    loop = make_loop(FakeProvider(calls), [slow, asking], judge=ask_as_default_mode)
    started = time.monotonic()
    events = await asyncio.wait_for(collect(loop.run("go"), cancelled), 5)
    assert time.monotonic() - started < 5 and events[-1].stop_reason == "cancelled"
    assert asking.runs == [] and slow.running_now == 0
    assert unanswered_tool_calls(loop.history) == []
    assert {e.call.id for e in events if isinstance(e, ToolFinished)} == {"a", "b"}
