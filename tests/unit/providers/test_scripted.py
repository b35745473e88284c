"""ScriptedProvider: replies played in order, with no network."""

import json

import pytest

from iac_code.messages import user
from iac_code.providers.base import Finish, ProviderError, TextDelta, ThinkingDelta, ToolCallReady, Usage
from iac_code.providers.scripted import ScriptedProvider


async def run(p):
    return [e async for e in p.stream("", [user("hi")], [], max_tokens=100)]


def text_of(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_plays_replies_in_order_and_cycles():
    p = ScriptedProvider([{"text": "one"}, {"text": "two"}])
    assert [text_of(await run(p)) for _ in range(3)] == ["one", "two", "one"]


async def test_events_of_a_full_reply():
    p = ScriptedProvider(
        [
            {
                "thinking": "think " * 10,
                "text": "answer " * 10,
                "tool_calls": [{"name": "write_file", "arguments": {"path": "a", "content": "b"}, "id": "call_fixed"}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 4},
            }
        ]
    )
    events = await run(p)
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "think " * 10
    assert text_of(events) == "answer " * 10
    assert [e.call.id for e in events if isinstance(e, ToolCallReady)] == ["call_fixed"]
    assert events[-2:] == [Usage(9, 4), Finish("tool_use")]


async def test_generated_tool_call_ids_are_unique():
    p = ScriptedProvider([{"tool_calls": [{"name": "bash", "arguments": '{"command": "ls"}'}]}])
    first, second = [next(e.call for e in await run(p) if isinstance(e, ToolCallReady)) for _ in range(2)]
    assert first.id != second.id and first.arguments == {"command": "ls"}


@pytest.mark.parametrize(
    ("finish_reason", "expected"),
    [("length", "max_tokens"), ("max_tokens", "max_tokens"), ("content_filter", "refusal"), ("stop", "end_turn")],
)
async def test_finish_reason_words(finish_reason, expected):
    events = await run(ScriptedProvider([{"text": "x", "finish_reason": finish_reason}]))
    assert events[-1] == Finish(expected)


async def test_notice_prefixes_every_reply():
    p = ScriptedProvider([{"text": "one"}, {"tool_calls": [{"name": "bash", "arguments": {}}]}], notice="[demo]")
    assert text_of(await run(p)) == "[demo]\n\none"
    assert text_of(await run(p)) == "[demo]"


async def test_error_reply_raises_provider_error():
    with pytest.raises(ProviderError, match="scripted outage"):
        await run(ScriptedProvider([{"error": "scripted outage"}]))


def test_from_file(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": [{"text": "from file"}]}))
    assert ScriptedProvider.from_file(path, model="m").script == [{"text": "from file"}]
    path.write_text(json.dumps({"replies": []}))
    with pytest.raises(ValueError, match="non-empty list"):
        ScriptedProvider.from_file(path)
    with pytest.raises(ValueError, match="cannot read script"):
        ScriptedProvider.from_file(tmp_path / "missing.json")


async def test_chunk_chars_sets_the_size_of_streamed_pieces():
    p = ScriptedProvider([{"text": "x" * 10, "chunk_chars": 4}])
    pieces = [e.text for e in await run(p) if isinstance(e, TextDelta)]
    assert pieces == ["xxxx", "xxxx", "xx"]
