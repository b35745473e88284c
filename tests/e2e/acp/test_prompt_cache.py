"""Prompt caching over ACP, against the scripted models' simulated caches: the OpenAI-style prefix stays
byte-identical from call to call, Anthropic requests carry breakpoints that move with the conversation, and
the prompt response reports the cached tokens."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator

import pytest
from tests.e2e.acp.wire import Agents
from tests.fakes.anthropic_server import ScriptedAnthropic

TURNS = 10


@pytest.fixture(scope="module")
def anthropic() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_anthropic(anthropic) -> None:
    anthropic.reset()


def _read_then_answer(model, turn: int) -> None:
    model.add(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]},
        {"text": f"Answer {turn}: main.tf declares one VPC."},
    )


def _session(agent, model, workspace, turns: int = TURNS) -> tuple[str, list[dict]]:
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {\n  cidr_block = "10.0.0.0/16"\n}\n' * 20)
    session_id = agent.new_session(workspace)
    usages = []
    for turn in range(turns):
        _read_then_answer(model, turn)
        response, _ = agent.prompt(session_id, f"Question {turn}: what does main.tf declare?")
        assert response["result"]["stopReason"] == "end_turn"
        usages.append(response["result"]["usage"])
    return session_id, usages


def _through_last_message(raw: bytes) -> bytes:
    """A chat-completions body up to the end of its last message (what the next call must start with)."""
    return raw[: raw.index(b'],"stream":')]


def test_the_openai_prefix_stays_byte_identical_over_a_session_with_tool_calls(spawn, model, workspace):
    agent = spawn()
    _, usages = _session(agent, model, workspace)
    raw = model.raw_requests
    assert len(raw) == 2 * TURNS
    for earlier, later in itertools.pairwise(raw):
        assert later.startswith(_through_last_message(earlier))
    tools = {json.dumps(json.loads(body)["tools"]) for body in raw}
    assert len(tools) == 1, "the same tools in the same order on every call"
    assert all(usage["cachedReadTokens"] > 0 for usage in usages[2:])
    assert all(usage["cachedReadTokens"] <= usage["inputTokens"] for usage in usages)
    assert "prompt_cache_key" not in model.requests[0], "an unknown compatible endpoint gets no unknown field"


def test_prompt_cache_key_is_a_hash_of_the_session_where_the_endpoint_takes_it(spawn, model, workspace):
    agent = spawn(IAC_CODE_PROMPT_CACHE_KEY="1")
    session_id, _ = _session(agent, model, workspace, turns=2)
    keys = {body["prompt_cache_key"] for body in model.requests}
    assert keys == {hashlib.sha256(session_id.encode()).hexdigest()[:32]}


def _marks(body: dict) -> list[tuple[str, int]]:
    """Where a Messages request marks cache breakpoints: ("tools", i), ("system", i), (message index, block)."""
    found = [("tools", i) for i, tool in enumerate(body.get("tools", [])) if "cache_control" in tool]
    found += [("system", i) for i, block in enumerate(body.get("system", [])) if "cache_control" in block]
    for index, message in enumerate(body["messages"]):
        content = message["content"] if isinstance(message["content"], list) else []
        found += [(f"message {index}", i) for i, block in enumerate(content) if "cache_control" in block]
    return found


def test_anthropic_breakpoints_are_present_and_move_with_the_conversation(anthropic, workspace, tmp_path):
    agents = Agents(anthropic.url, tmp_path / "config")
    try:
        agent = agents.start(IAC_CODE_PROVIDER="anthropic_compatible", IAC_CODE_MODEL="claude-scripted")
        _, usages = _session(agent, anthropic, workspace, turns=4)
    finally:
        agents.close_all()
    ends = []
    for body in anthropic.requests:
        marks = _marks(body)
        assert len(marks) <= 4, "Anthropic takes at most four breakpoints"
        assert ("tools", len(body["tools"]) - 1) in marks and ("system", 0) in marks
        last = len(body["messages"]) - 1
        assert (f"message {last}", len(body["messages"][last]["content"]) - 1) in marks, "the moving end"
        ends.append(last)
        assert all(block["cache_control"] == {"type": "ephemeral"} for block in body["system"])
    assert ends == sorted(ends) and len(set(ends)) == len(ends), "the end mark moves on with every call"
    assert usages[0]["cachedWriteTokens"] > 0
    assert all(usage["cachedReadTokens"] > 0 for usage in usages[1:])
    assert all(u["cachedReadTokens"] + u["cachedWriteTokens"] <= u["inputTokens"] for u in usages)


def test_the_one_hour_ttl_when_configured(anthropic, workspace, tmp_path):
    agents = Agents(anthropic.url, tmp_path / "config")
    try:
        agent = agents.start(
            IAC_CODE_PROVIDER="anthropic_compatible", IAC_CODE_MODEL="claude-scripted", IAC_CODE_CACHE_TTL="1h"
        )
        _session(agent, anthropic, workspace, turns=1)
    finally:
        agents.close_all()
    for body in anthropic.requests:
        assert {json.dumps(body["system"][0]["cache_control"])} == {json.dumps({"type": "ephemeral", "ttl": "1h"})}
