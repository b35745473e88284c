"""The fake OpenAI server itself, driven with the real openai SDK and raw httpx."""

import httpx
import openai
import pytest
from tests.fakes.openai_server import DanglingToolCalls, ScriptedOpenAI, check_tool_pairing

HI = [{"role": "user", "content": "hi"}]


def client(server: ScriptedOpenAI, retries: int = 0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url, api_key="test-key", max_retries=retries)


async def collect(server: ScriptedOpenAI, **extra):
    stream = await client(server).chat.completions.create(model="m", messages=HI, stream=True, **extra)
    return [chunk async for chunk in stream]


async def test_streams_text_in_chunks_and_records_requests(openai_server):
    openai_server.add({"text": "abcdefghij", "chunk_chars": 3})
    chunks = await collect(openai_server)
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["abc", "def", "ghi", "j"]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert openai_server.requests[0]["messages"] == HI


async def test_tool_call_arguments_split_across_chunks(openai_server):
    openai_server.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "x" * 40}}]})
    chunks = await collect(openai_server)
    parts = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert parts[0].id and parts[0].function.name == "write_file"
    assert all(p.id is None for p in parts[1:]) and len(parts) >= 3
    assert "".join(p.function.arguments for p in parts).startswith('{"path": "main.tf"')
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


async def test_usage_only_when_requested(openai_server):
    openai_server.add({"text": "a", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}, {"text": "b"})
    with_usage = await collect(openai_server, stream_options={"include_usage": True})
    without = await collect(openai_server)
    assert with_usage[-1].choices == [] and with_usage[-1].usage.prompt_tokens == 7
    assert all(c.usage is None for c in without)


async def test_dangling_tool_call_is_a_400_and_keeps_the_reply(openai_server):
    openai_server.add({"text": "kept"})
    messages = [
        *HI,
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}],
        },
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(openai.BadRequestError, match="c1"):
        await client(openai_server).chat.completions.create(model="m", messages=messages)
    answer = await client(openai_server).chat.completions.create(model="m", messages=HI)
    assert answer.choices[0].message.content == "kept"


def test_pairing_rules():
    call = {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    check_tool_pairing([call, {"role": "tool", "tool_call_id": "b"}, {"role": "tool", "tool_call_id": "a"}])
    with pytest.raises(DanglingToolCalls):
        check_tool_pairing([call, {"role": "tool", "tool_call_id": "a"}])
    with pytest.raises(DanglingToolCalls):
        check_tool_pairing([{"role": "user"}, {"role": "tool", "tool_call_id": "z"}])


async def test_exhausted_script_is_a_500_and_default_is_used(openai_server):
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        await client(openai_server).chat.completions.create(model="m", messages=HI)
    openai_server.default = lambda body: {"text": "echo " + body["messages"][-1]["content"]}
    answer = await client(openai_server).chat.completions.create(model="m", messages=HI)
    assert answer.choices[0].message.content == "echo hi"


async def test_error_status_then_success_with_sdk_retry(openai_server):
    openai_server.add({"status": 429}, {"text": "ok"})
    answer = await client(openai_server, retries=1).chat.completions.create(model="m", messages=HI)
    assert answer.choices[0].message.content == "ok"
    assert len(openai_server.requests) == 2


async def test_truncated_stream_has_no_finish_and_no_done(openai_server):
    openai_server.add({"text": "x" * 100, "truncate": True})
    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{openai_server.url}/chat/completions", json={"model": "m", "messages": HI, "stream": True}
        )
    assert '"content": "xx' in response.text
    assert 'finish_reason": "stop' not in response.text and "[DONE]" not in response.text


async def test_hang_blocks_until_client_leaves(openai_server):
    openai_server.add({"text": "first", "hang": True}, {"text": "after"})
    stream = await client(openai_server).chat.completions.create(model="m", messages=HI, stream=True)
    first, second = await stream.__anext__(), await stream.__anext__()
    assert first.choices[0].delta.role == "assistant" and second.choices[0].delta.content == "first"
    await stream.close()
    assert (await client(openai_server).chat.completions.create(model="m", messages=HI)).choices[
        0
    ].message.content == "after"


async def test_models_and_unknown_paths(openai_server):
    models = await client(openai_server).models.list()
    assert [m.id for m in models.data] == ["scripted-model"]
    async with httpx.AsyncClient() as http:
        assert (await http.post(openai_server.url + "/completions", json={})).status_code == 404
        assert (await http.get(openai_server.url + "/nothing")).status_code == 404


def test_stop_ends_a_hanging_stream():
    server = ScriptedOpenAI([{"text": "x", "hang": True}]).start()
    with httpx.Client() as http:
        with http.stream("POST", server.url + "/chat/completions", json={"messages": HI, "stream": True}) as response:
            lines = response.iter_lines()
            assert next(lines).startswith("data: ")
            server.stop()
            assert "[DONE]" not in "".join(lines)
