"""Every call goes through the session's Judge, reads included; reads that may run still run together."""

from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.events import PermissionRequest, ToolFinished, ToolRunning
from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import EVERY_OPTION, PERMISSION_DENIED, Ask, JudgedCall, Refuse, Run, Verdict, decide
from iac_code.messages import ToolCall
from iac_code.providers.base import Finish, ToolCallReady


async def run_turn(loop: AgentLoop, choice: str = "allow_once") -> list[object]:
    events = []
    async for event in loop.run("go"):
        events.append(event)
        if isinstance(event, PermissionRequest):
            event.resolve(choice)
    return events


async def test_a_remembered_reject_for_a_read_tool_refuses_its_call_without_running_it():
    judged: list[tuple[str, str]] = []

    def judge(call: JudgedCall) -> Verdict:
        judged.append((call.subject, call.access))
        return decide(call.access, "bypass-permissions", "reject" if call.subject == "look" else None)

    tool = FakeTool("look")
    provider = FakeProvider(call("look", path="main.tf"), say("ok"))
    loop = make_loop(provider, [tool], judge=judge)
    events = await run_turn(loop)
    assert judged == [("look", "read")]
    assert tool.runs == []
    assert not any(isinstance(e, ToolRunning) for e in events)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.is_error and finished.result.text == PERMISSION_DENIED
    assert provider.calls[1][-1].text == PERMISSION_DENIED  # the model is told


async def test_a_read_the_judge_asks_about_is_asked_and_runs_only_when_allowed():
    asked: list[PermissionRequest] = []
    tool = FakeTool("look")

    def judge(call: JudgedCall) -> Verdict:
        return Ask(EVERY_OPTION)

    for choice, runs in (("allow_once", 1), ("reject_once", 0)):
        loop = make_loop(FakeProvider(call("look"), say("ok")), [tool], judge=judge)
        tool.runs.clear()
        events = await run_turn(loop, choice)
        asked += [e for e in events if isinstance(e, PermissionRequest)]
        assert len(tool.runs) == runs
    assert [request.subject for request in asked] == ["look", "look"]


async def test_reads_asked_about_first_still_run_together_and_a_refused_one_is_left_out():
    verdicts: dict[str, Verdict] = {"a": Ask(EVERY_OPTION), "b": Run(), "c": Refuse("not this one"), "d": Run()}
    running = {"now": 0, "most": 0}

    class Counted(FakeTool):
        async def run(self, args, ctx):
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
            try:
                return await super().run(args, ctx)
            finally:
                running["now"] -= 1

    tools = {name: Counted(name, delay=0.05) for name in verdicts}
    script = [*(ToolCallReady(ToolCall(f"c-{name}", name, {})) for name in verdicts), Finish("tool_use")]
    loop = make_loop(FakeProvider(script, say("ok")), tools.values(), judge=lambda call: verdicts[call.subject])
    events = await run_turn(loop, "allow_once")
    assert [e.call.id for e in events if isinstance(e, PermissionRequest)] == ["c-a"]
    assert [name for name, tool in tools.items() if tool.runs] == ["a", "b", "d"]
    assert running["most"] == 3, "the allowed reads run in parallel"
    results = {m.tool_call_id: m for m in loop.history if m.role == "tool"}
    assert results["c-c"].is_error and results["c-c"].text == "not this one"
