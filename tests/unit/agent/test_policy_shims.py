"""A guard's shim asks about a run through the call's request_access, as tools/shell.py does: the policy
decides (the mode, the user's answer) and the shim is answered in its words, whatever the guard makes of it."""

import asyncio

import pytest
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.events import PermissionRequest
from iac_code.agent.policy import PLAN_MODE_REFUSAL, JudgedCall, Mode, Verdict, decide
from iac_code.guard.calls import BashCallDecision
from iac_code.guard.channel import ShimRequest
from iac_code.tools.base import AccessDetails


class ShimmedTool(FakeTool):
    """A command tool whose command runs `terraform apply` on its own: its shim asks the guard's decision."""

    def __init__(self) -> None:
        super().__init__("bash", category="execute")
        self.shim_answers: list[str | None] = []

    async def run(self, args, ctx):
        async def ask(command: str, shown: str) -> str | None:
            return await ctx.request_access("bash", "infra_change", command, AccessDetails(shown, command=command))

        decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
        request = ShimRequest("terraform", "/work", ["apply"])
        self.shim_answers.append(await asyncio.to_thread(decision, request))
        decision.close()
        return await super().run(args, ctx)


async def _shim_answer(mode: Mode, choice: str) -> str | None:
    def judge(call: JudgedCall) -> Verdict:
        return decide(call.access, mode, None)

    tool = ShimmedTool()
    loop = make_loop(FakeProvider(call("bash"), say("ok")), [tool], judge=judge)
    async for event in loop.run("go"):
        if isinstance(event, PermissionRequest):
            event.resolve("allow_once" if event.call.name == "bash" and not event.infrastructure_change else choice)
    (answer,) = tool.shim_answers
    return answer


@pytest.mark.parametrize(
    ("mode", "choice", "answer"),
    [
        ("default", "allow_once", None),
        ("default", "reject_once", "refused by the user"),
        ("plan", "allow_once", f"refused: {PLAN_MODE_REFUSAL}"),  # refused unasked: nothing changes in plan mode
    ],
)
async def test_the_shim_is_answered_in_the_policys_words(mode, choice, answer):
    assert await _shim_answer(mode, choice) == answer
