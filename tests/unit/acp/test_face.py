"""A session core through its ACP face, in-process: the turn's events become updates and permission requests, in stream order, with
the policy, the session's memory and the store — no process, no transport."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp.helpers import text_block
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, say, workspace_at
from tests.unit.agent.test_session import loop_factory

from iac_code.acp.face import AcpFace, prompt_turn
from iac_code.acp.router import request_error
from iac_code.agent.policy import PLAN_MODE_REFUSAL
from iac_code.agent.session import SessionCore
from iac_code.errors import IacError
from iac_code.providers.base import ProviderAuthError, ProviderError

DUMP = {"mode": "json", "by_alias": True, "exclude_none": True}


class ScriptedPeer:
    """The client: records what it is sent (in one list, so order across kinds is kept) and answers
    permission requests with the next scripted option id (None: never answers)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.seen: list[dict[str, Any]] = []

    async def update(self, session_id: str, update: Any) -> None:
        self.seen.append(update.model_dump(**DUMP))

    async def request_permission(self, request: Any) -> Any:
        self.seen.append({"permission": request.model_dump(**DUMP)})
        answer = self.answers.pop(0)
        if answer is None:
            await asyncio.Event().wait()
        return {"outcome": {"outcome": "selected", "optionId": answer}}

    def kinds(self) -> list[str]:
        """What was sent, in order (usage reports left out)."""
        kinds = [m.get("sessionUpdate", "permission") for m in self.seen]
        return [kind for kind in kinds if kind != "usage_update"]


class InfraTool(FakeTool):
    def access(self, args: dict[str, Any]) -> str:
        return "infra_change"


class Live:
    """A session core shown through an AcpFace, prompted as `session/prompt` prompts it."""

    def __init__(self, core: SessionCore, peer: ScriptedPeer) -> None:
        self.core = core
        self.peer = peer
        self.reads_images = False  # whether the model takes images

    async def prompt(self, blocks: list[Any]) -> Any:
        return await prompt_turn(self.core, blocks, self.reads_images)

    def cancel(self) -> None:
        self.core.cancel()

    @property
    def busy(self) -> bool:
        return self.core.busy


def session(tmp_path, peer, provider, tools, store=None, **state) -> Live:
    make_loop = loop_factory(provider, tools, tmp_path)
    return Live(
        SessionCore("s1", workspace_at(tmp_path), AcpFace("s1", peer), make_loop, store=store, title="t", **state), peer
    )


def prompt(text: str) -> list[Any]:
    return [text_block(text)]


async def test_a_permission_request_comes_after_its_tool_call_and_allow_always_is_remembered(tmp_path, store):
    writer = FakeTool("write", category="write", kind="edit")
    peer = ScriptedPeer("allow_always")
    provider = FakeProvider(call("write"), say("done"), call("write", "c2"), say("again"))
    live = session(tmp_path, peer, provider, [writer], store)

    response = await live.prompt(prompt("write"))
    assert response.stop_reason == "end_turn"
    assert peer.kinds()[:4] == ["tool_call", "permission", "tool_call_update", "tool_call_update"]
    request = next(m["permission"] for m in peer.seen if "permission" in m)
    assert request["toolCall"]["toolCallId"] == "c1" and len(request["options"]) == 4
    assert live.core.always == {"write": "allow"}
    assert (await store.get("s1")).permissions == {"write": "allow"}
    _, history = await store.load("s1")
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"], "saved before the answer"

    peer.seen.clear()
    await live.prompt(prompt("again"))  # remembered: no second question
    assert "permission" not in peer.kinds() and writer.runs == [{}, {}]


async def test_plan_mode_refuses_writes_with_a_reason_for_the_model(tmp_path):
    writer = FakeTool("write", category="write", kind="edit")
    provider, peer = FakeProvider(call("write"), say("ok")), ScriptedPeer()  # any question fails the test
    live = session(tmp_path, peer, provider, [writer], mode="plan")
    await live.prompt(prompt("write"))
    assert writer.runs == []
    assert provider.calls[1][-1].text == PLAN_MODE_REFUSAL
    assert peer.kinds() == ["tool_call", "tool_call_update", "agent_message_chunk"]
    final = next(m for m in peer.seen if m.get("sessionUpdate") == "tool_call_update")
    assert final["status"] == "failed" and final["rawOutput"] == PLAN_MODE_REFUSAL


async def test_an_infrastructure_change_is_asked_every_time_with_once_options(tmp_path):
    apply = InfraTool("apply", category="execute", kind="execute")
    peer = ScriptedPeer("allow_once", "reject_once")
    provider = FakeProvider(call("apply"), say("applied"), call("apply", "c2"), say("stopped"))
    live = session(tmp_path, peer, provider, [apply], mode="bypass-permissions", always={"apply": "allow"})
    await live.prompt(prompt("apply"))
    await live.prompt(prompt("apply again"))
    requests = [m["permission"] for m in peer.seen if "permission" in m]
    assert len(requests) == 2 and apply.runs == [{}]
    tool_call = requests[0]["toolCall"]
    assert tool_call["title"] == "Infrastructure change: Fake apply"
    assert tool_call["rawInput"] == {"infrastructureChange": True}
    assert [o["optionId"] for o in requests[0]["options"]] == ["allow_once", "reject_once"]


async def test_cancel_while_the_client_is_asked_ends_the_prompt_cancelled(tmp_path):
    writer = FakeTool("write", category="write", kind="edit")
    peer = ScriptedPeer(None)  # never answers
    live = session(tmp_path, peer, FakeProvider(call("write")), [writer])
    turn = asyncio.create_task(live.prompt(prompt("write")))
    while "permission" not in peer.kinds():
        await asyncio.sleep(0.01)
    live.cancel()
    response = await asyncio.wait_for(turn, 2)
    assert response.stop_reason == "cancelled" and writer.runs == []
    assert not live.busy


async def test_slash_clear_forgets_the_history_in_memory_and_in_the_store(tmp_path, store):
    live = session(tmp_path, ScriptedPeer(), FakeProvider(say("hello")), [], store)
    await live.prompt(prompt("hi"))
    assert len((await store.load("s1"))[1]) == 2
    await live.prompt(prompt("/clear"))
    assert live.core.loop.history == [] and (await store.load("s1"))[1] == []
    assert peer_text(live) == ["hello", "Conversation cleared."]


def peer_text(live: Live) -> list[str]:
    seen = live.peer.seen
    return [m["content"]["text"] for m in seen if m.get("sessionUpdate") == "agent_message_chunk"]


class BrokenTool(FakeTool):
    def access(self, args: dict[str, Any]) -> str:
        raise RuntimeError("a bug in the tool's access()")


async def test_a_failed_turn_is_the_prompts_error_by_its_kind_and_nothing_is_said_as_a_chunk(tmp_path):
    cases = [
        (ProviderAuthError("authentication failed for provider fake"), [], -32000, "Authentication required: "),
        (ProviderError("fake returned HTTP 500: down"), [], -32603, "fake returned HTTP 500: down"),
        (call("broken"), [BrokenTool("broken")], -32603, "Internal error"),  # a bug: no details for the client
    ]
    for reply, tools, code, message in cases:
        peer = ScriptedPeer()
        live = session(tmp_path, peer, FakeProvider(reply), tools)
        with pytest.raises(IacError) as caught:
            await live.prompt(prompt("go"))
        error = request_error(caught.value)
        assert (error.code, str(error).startswith(message)) == (code, True), str(error)
        assert [m for m in peer.seen if m.get("sessionUpdate") == "agent_message_chunk"] == []
