"""AnthropicProvider: the real anthropic SDK against the scripted Messages server."""

import anthropic
import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.providers.anthropic import AnthropicProvider, to_anthropic_messages
from iac_code.providers.base import (
    Finish,
    ProviderAuthError,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolSchema,
    Usage,
)

SECRET = "sk-ant-test-do-not-print-987"
WRITE = ToolSchema("write_file", "Write a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


def provider(server, **kwargs) -> AnthropicProvider:
    kwargs.setdefault("max_retries", 0)
    return AnthropicProvider(
        "anthropic", "claude-test", server.url, SECRET, 200_000, key_env="ANTHROPIC_API_KEY", **kwargs
    )


async def run(p, history=None, tools=()):
    return [e async for e in p.stream("Be brief.", history or [user("hi")], list(tools), max_tokens=300)]


async def test_thinking_with_signature_text_tool_use_and_usage(anthropic_server):
    anthropic_server.add(
        {
            "thinking": "consider the VPC " * 3,
            "signature": "sig-xyz",
            "text": "Writing main.tf now.",
            "tool_calls": [
                {"id": "toolu_1", "name": "write_file", "arguments": {"path": "main.tf", "content": "y" * 60}}
            ],
            "usage": {"input_tokens": 40, "output_tokens": 12},
        }
    )
    events = await run(provider(anthropic_server), tools=[WRITE])
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(e.text for e in thinking) == "consider the VPC " * 3
    assert [e.signature for e in thinking if e.signature] == ["sig-xyz"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Writing main.tf now."
    assert [e.call for e in events if isinstance(e, ToolCallReady)] == [
        ToolCall("toolu_1", "write_file", {"path": "main.tf", "content": "y" * 60})
    ]
    assert events[-2:] == [Usage(40, 12), Finish("tool_use")]


async def test_request_shape(anthropic_server):
    anthropic_server.add({"text": "ok"})
    await run(provider(anthropic_server), tools=[WRITE])
    body = anthropic_server.requests[0]
    assert body["model"] == "claude-test" and body["max_tokens"] == 300 and body["stream"] is True
    mark = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": mark}]
    assert body["tools"] == [
        {"name": "write_file", "description": "Write a file.", "input_schema": WRITE.parameters, "cache_control": mark}
    ]


async def test_base_url_with_v1_suffix_still_works(anthropic_server):
    anthropic_server.add({"text": "ok"})
    p = AnthropicProvider("anthropic_compatible", "m", anthropic_server.url + "/v1/", "k", 1000, max_retries=0)
    assert TextDelta("ok") in await run(p)


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [("end_turn", "end_turn"), ("stop_sequence", "end_turn"), ("max_tokens", "max_tokens"), ("refusal", "refusal")],
)
async def test_stop_reasons(anthropic_server, stop_reason, expected):
    anthropic_server.add({"text": "t", "finish_reason": stop_reason})
    events = await run(provider(anthropic_server))
    assert events[-1] == Finish(expected)


def test_history_translation_merges_tool_results_and_echoes_signed_thinking():
    a, b = ToolCall("t1", "read_file", {"path": "x"}), ToolCall("t2", "bash", {"command": "ls"})
    history = [
        user("go"),
        Message("assistant", text="reading", thinking="hm", thinking_signature="sig", tool_calls=[a, b]),
        tool_result(a, "contents"),
        tool_result(b, "denied", is_error=True),
        user("thanks"),
        Message("assistant", text="ok", thinking="unsigned"),
    ]
    assert to_anthropic_messages(history) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "x"}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "contents"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "denied", "is_error": True},
                {"type": "text", "text": "thanks"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]


async def test_translated_tool_round_trip_is_accepted(anthropic_server):
    anthropic_server.add({"text": "done"})
    call = ToolCall("t1", "write_file", {"path": "a"})
    history = [user("go"), Message("assistant", tool_calls=[call]), tool_result(call, "ok")]
    assert (await run(provider(anthropic_server), history))[-1] == Finish("end_turn")


async def test_dangling_tool_use_400_becomes_provider_error(anthropic_server):
    history = [user("go"), Message("assistant", tool_calls=[ToolCall("t7", "bash", {})]), user("next")]
    with pytest.raises(ProviderError, match="HTTP 400.*t7"):
        await run(provider(anthropic_server), history)


async def test_retry_then_success(anthropic_server):
    anthropic_server.add({"status": 429}, {"status": 529}, {"text": "third"})
    events = await run(provider(anthropic_server, max_retries=2))
    assert TextDelta("third") in events and len(anthropic_server.requests) == 3


async def test_auth_failure_hides_key(anthropic_server):
    anthropic_server.add({"status": 401})
    with pytest.raises(ProviderAuthError) as caught:  # its own kind: the client is told to sign in
        await run(provider(anthropic_server, max_retries=2))
    assert (
        str(caught.value)
        == "authentication failed for provider anthropic: check IAC_CODE_API_KEY (or ANTHROPIC_API_KEY)"
    )
    assert SECRET not in str(caught.value) and len(anthropic_server.requests) == 1


async def test_server_error(anthropic_server):
    anthropic_server.add({"status": 500, "text": "kaput"})
    with pytest.raises(ProviderError, match="HTTP 500: kaput"):
        await run(provider(anthropic_server))


async def test_truncated_stream_is_an_error(anthropic_server):
    anthropic_server.add({"text": "half " * 30, "truncate": True})
    with pytest.raises(ProviderError, match="stream ended before the model finished"):
        await run(provider(anthropic_server))


async def test_fake_server_non_streaming_and_exhaustion(anthropic_server):
    client = anthropic.AsyncAnthropic(base_url=anthropic_server.url, api_key="k", max_retries=0)
    anthropic_server.add({"text": "plain", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]})
    message = await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert [b.type for b in message.content] == ["text", "tool_use"] and message.stop_reason == "tool_use"
    with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
        await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])


async def test_hanging_stream_shows_first_text_and_can_be_abandoned(anthropic_server):
    anthropic_server.add({"text": "first words then silence", "chunk_chars": 5, "hang": True}, {"text": "next"})
    p = provider(anthropic_server)
    stream = p.stream("", [user("hi")], [], max_tokens=10)
    assert await stream.__anext__() == TextDelta("first")
    await stream.aclose()
    assert TextDelta("next") in await run(p)
