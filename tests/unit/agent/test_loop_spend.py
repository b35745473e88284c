"""The loop's part in what a session spends: each call's usage kept on its message, the session's cost on
UsageReport, the turn's cached tokens on TurnEnd, a cache key from the session id, MCP tools in name order."""

from __future__ import annotations

import hashlib

import pytest
from tests.unit.agent.fakes import FakeProvider, FakeTool, make_loop

from iac_code.agent.events import TurnEnd, UsageReport
from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.messages import Message
from iac_code.providers.base import Finish, TextDelta, Usage
from iac_code.providers.prices import Price

PRICE = Price(1.0, 2.0, 0.1, 1.25, "USD")


class KeyedProvider(FakeProvider):
    def __init__(self, *script):
        super().__init__(*script)
        self.keys: list[str] = []

    async def stream(self, system, history, tools, *, max_tokens, cache_key=""):
        self.keys.append(cache_key)
        async for event in super().stream(system, history, tools, max_tokens=max_tokens):
            yield event


def _answer(text: str, usage: Usage) -> list:
    return [TextDelta(text), usage, Finish("end_turn")]


async def _turn(loop: AgentLoop, prompt: str) -> list:
    return [event async for event in loop.run(prompt)]


async def test_usage_is_kept_on_the_answer_and_the_cost_goes_on_from_the_history():
    earlier = [Message(role="assistant", text="a", usage=Usage(1_000_000, 0), model="fake-model")]
    provider = KeyedProvider(_answer("b", Usage(2_000_000, 1_000_000, cache_read_tokens=1_000_000)))
    loop = make_loop(provider, config=LoopConfig(session_id="s1", prices={"fake-model": PRICE}.get), history=earlier)
    events = await _turn(loop, "q")
    (report,) = [e for e in events if isinstance(e, UsageReport)]
    assert report.cost is not None and report.cost.amount == pytest.approx(1.0 + 1.0 + 0.1 + 2.0)
    end = events[-1]
    assert isinstance(end, TurnEnd) and (end.usage.input_tokens, end.usage.cache_read_tokens) == (2_000_000, 1_000_000)
    assert loop.history[-1].usage == Usage(2_000_000, 1_000_000, 1_000_000) and loop.history[-1].model == "fake-model"
    assert provider.keys == [hashlib.sha256(b"s1").hexdigest()[:32]]


async def test_mcp_tools_are_offered_in_name_order_whichever_order_they_come_in():
    listed = [FakeTool("mcp__b__z"), FakeTool("mcp__a__y")]
    provider = FakeProvider()
    loop = make_loop(provider, [FakeTool("read")], extra_tools=lambda: listed)
    await _turn(loop, "q")
    listed.reverse()
    await _turn(loop, "q")
    assert provider.tool_names == [["read", "mcp__a__y", "mcp__b__z"]] * 2
