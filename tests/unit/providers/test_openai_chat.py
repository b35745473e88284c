"""OpenAIChatProvider: the real openai SDK against the scripted server."""

import asyncio

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
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
from iac_code.providers.openai_chat import OpenAIChatProvider, usage_of

SECRET = "sk-test-do-not-print-0123456789"
WRITE = ToolSchema("write_file", "Write a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


def provider(server, **kwargs) -> OpenAIChatProvider:
    kwargs.setdefault("max_retries", 0)
    return OpenAIChatProvider("openai", "gpt-test", server.url, SECRET, 128_000, key_env="OPENAI_API_KEY", **kwargs)


async def run(p, history=None, tools=()):
    return [e async for e in p.stream("You are terse.", history or [user("hi")], list(tools), max_tokens=256)]


async def test_text_thinking_usage_and_finish(openai_server):
    openai_server.add(
        {"thinking": "let me think " * 5, "text": "hello " * 10, "usage": {"prompt_tokens": 11, "completion_tokens": 5}}
    )
    events = await run(provider(openai_server))
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "let me think " * 5
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) > 1 and "".join(texts) == "hello " * 10
    assert events[-2:] == [Usage(11, 5), Finish("end_turn")]


async def test_request_shape(openai_server):
    openai_server.add({"text": "ok"})
    await run(provider(openai_server, max_tokens_field="max_completion_tokens"), tools=[WRITE])
    body = openai_server.requests[0]
    assert body["model"] == "gpt-test" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body
    assert body["messages"] == [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "write_file", "description": "Write a file.", "parameters": WRITE.parameters},
        }
    ]


async def test_split_tool_calls_are_reassembled_once_each(openai_server):
    openai_server.add(
        {
            "text": "writing",
            "tool_calls": [
                {"id": "call_a", "name": "write_file", "arguments": {"path": "main.tf", "content": "x" * 50}},
                {"id": "call_b", "name": "read_file", "arguments": {"path": "vars.tf"}},
            ],
        }
    )
    events = await run(provider(openai_server), tools=[WRITE])
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls == [
        ToolCall("call_a", "write_file", {"path": "main.tf", "content": "x" * 50}),
        ToolCall("call_b", "read_file", {"path": "vars.tf"}),
    ]
    assert events[-1] == Finish("tool_use")


async def test_unparseable_arguments_become_empty(openai_server):
    openai_server.add({"tool_calls": [{"id": "c", "name": "bash", "arguments": '{"command": "ls'}]})
    events = await run(provider(openai_server))
    assert [e.call.arguments for e in events if isinstance(e, ToolCallReady)] == [{}]


@pytest.mark.parametrize(
    ("finish_reason", "expected"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "refusal"), ("tool_calls", "tool_use")],
)
async def test_finish_reasons(openai_server, finish_reason, expected):
    openai_server.add({"text": "t", "finish_reason": finish_reason})
    events = await run(provider(openai_server))
    assert events[-1] == Finish(expected)
    assert sum(isinstance(e, Finish) for e in events) == 1


async def test_refusal_delta_is_shown_and_finishes_as_refusal(openai_server):
    openai_server.add({"refusal": "I can't help with that."})
    events = await run(provider(openai_server))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "I can't help with that."
    assert events[-1] == Finish("refusal")


async def test_history_translation_echoes_reasoning_and_tool_results(openai_server):
    openai_server.add({"text": "done"})
    call = ToolCall("call_1", "write_file", {"path": "a.tf"})
    history = [
        user("write it"),
        Message("assistant", text="", thinking="plan", tool_calls=[call]),
        tool_result(call, "written"),
    ]
    await run(provider(openai_server), history)
    sent = openai_server.requests[0]["messages"][1:]
    assert sent[1] == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "plan",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "write_file", "arguments": '{"path": "a.tf"}'}}
        ],
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "written"}


async def test_retry_after_429_then_success(openai_server):
    openai_server.add({"status": 429}, {"text": "second try"})
    events = await run(provider(openai_server, max_retries=2))
    assert TextDelta("second try") in events
    assert len(openai_server.requests) == 2


async def test_auth_failure_is_not_retried_and_hides_the_key(openai_server):
    openai_server.add({"status": 401}, {"text": "never"})
    with pytest.raises(ProviderAuthError) as caught:  # its own kind: the client is told to sign in
        await run(provider(openai_server, max_retries=2))
    message = str(caught.value)
    assert message == "authentication failed for provider openai: check IAC_CODE_API_KEY (or OPENAI_API_KEY)"
    assert SECRET not in message and len(openai_server.requests) == 1


async def test_server_error_after_retries(openai_server):
    openai_server.add({"status": 500, "text": "boom"}, {"status": 500, "text": "boom"})
    with pytest.raises(ProviderError, match="HTTP 500: boom") as caught:
        await run(provider(openai_server, max_retries=1))
    assert len(openai_server.requests) == 2 and caught.value.kind == "model"


async def test_dangling_tool_call_400_becomes_provider_error(openai_server):
    history = [user("a"), Message("assistant", tool_calls=[ToolCall("c9", "bash", {})]), user("b")]
    with pytest.raises(ProviderError, match="HTTP 400.*c9"):
        await run(provider(openai_server), history)


async def test_truncated_stream_is_an_error(openai_server):
    openai_server.add({"text": "partial answer " * 5, "truncate": True})
    with pytest.raises(ProviderError, match="stream ended before the model finished"):
        await run(provider(openai_server))


async def test_unreachable_server(openai_server):
    url = openai_server.url
    openai_server.stop()
    p = OpenAIChatProvider("ollama", "m", url, "", 1000, max_retries=0)
    with pytest.raises(ProviderError, match="cannot reach ollama"):
        await run(p)


async def test_model_change_applies_to_next_call(openai_server):
    openai_server.add({"text": "a"}, {"text": "b"})
    p = provider(openai_server)
    await run(p)
    p.model = "other-model"
    await run(p)
    assert [r["model"] for r in openai_server.requests] == ["gpt-test", "other-model"]


async def test_cancelling_a_hung_stream_leaves_the_provider_usable(openai_server):
    openai_server.add({"text": "never finishes", "hang": True}, {"text": "next"})
    p = provider(openai_server)
    task = asyncio.create_task(run(p))
    while not openai_server.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert TextDelta("next") in await run(p)


async def test_the_tools_are_encoded_once_per_tool_list_and_again_when_one_changes(openai_server, monkeypatch):
    from iac_code.providers import openai_chat

    converted: list[str] = []
    real = openai_chat.to_openai_tool
    monkeypatch.setattr(openai_chat, "to_openai_tool", lambda tool: converted.append(tool.name) or real(tool))
    openai_server.add({"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"})
    p = provider(openai_server)
    read = ToolSchema("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})
    await run(p, tools=[WRITE, read])
    await run(p, tools=[ToolSchema(WRITE.name, WRITE.description, WRITE.parameters), read])  # equal, rebuilt
    assert converted == ["write_file", "read_file"]
    read.parameters["properties"]["limit"] = {"type": "integer"}  # changed in place: seen all the same
    await run(p, tools=[WRITE, read])
    await run(p)
    assert converted == ["write_file", "read_file"] * 2
    bodies = openai_server.requests
    assert bodies[0] == bodies[1] and "tools" not in bodies[3]
    assert [t["function"]["parameters"] for t in bodies[2]["tools"]] == [WRITE.parameters, read.parameters]
    assert "limit" in bodies[2]["tools"][1]["function"]["parameters"]["properties"]
    assert "limit" not in bodies[1]["tools"][1]["function"]["parameters"]["properties"]


def test_the_body_is_the_json_the_sdk_would_have_sent():
    from openai._utils._json import openapi_dumps

    from iac_code.providers.openai_chat import _RequestBody, to_openai_messages, to_openai_tool

    history = [user('naïve 日本 "quoted"\n\t'), Message(role="assistant", text="ok"), user("again")]
    request = {"model": "m", "messages": to_openai_messages("sys", history), "stream": True, "max_tokens": 9}
    body = _RequestBody()
    assert body.encode(request, []) == openapi_dumps(request)
    for _ in range(2):  # encoded, then from the cache
        assert body.encode(request, [WRITE]) == openapi_dumps({**request, "tools": [to_openai_tool(WRITE)]})


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 64},
                "completion_tokens_details": {"reasoning_tokens": 5},
            },
            Usage(100, 9, cache_read_tokens=64, thought_tokens=5),
        ),
        (  # DashScope's explicit cache says what it wrote
            {
                "prompt_tokens": 100,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_input_tokens": 90},
            },
            Usage(100, 9, cache_write_tokens=90),
        ),
        ({"prompt_tokens": 100, "completion_tokens": 9, "prompt_cache_hit_tokens": 70}, Usage(100, 9, 70)),  # DeepSeek
        ({"prompt_tokens": 100, "completion_tokens": 9}, Usage(100, 9)),
    ],
)
def test_usage_keeps_cached_and_reasoning_tokens_apart(reported, expected):
    assert usage_of(reported) == expected


async def test_dashscope_models_with_explicit_caching_get_marks_and_others_do_not(openai_server):
    openai_server.add({"text": "ok"}, {"text": "ok"})
    marked = provider(openai_server, cache_marked_models=("qwen3-coder-plus",))
    marked.model = "qwen3-coder-plus"
    await run(marked)
    marked.model = "qwen-max"
    await run(marked)
    first, second = (body["messages"] for body in openai_server.requests)
    assert first[0]["content"] == [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    assert second[0]["content"] == "You are terse."


async def test_prompt_cache_key_only_where_the_endpoint_takes_it(openai_server):
    openai_server.add({"text": "ok"}, {"text": "ok"})
    for sends in (True, False):
        p = provider(openai_server, sends_cache_key=sends)
        [e async for e in p.stream("s", [user("hi")], [], max_tokens=9, cache_key="k1")]
    assert [body.get("prompt_cache_key") for body in openai_server.requests] == ["k1", None]
