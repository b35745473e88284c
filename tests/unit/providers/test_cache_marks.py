"""Where requests mark their prompt-cache breakpoints."""

from __future__ import annotations

from iac_code.providers.cache_marks import mark_anthropic, mark_openai

MARK = {"type": "ephemeral"}


def _marked(blocks: list[dict]) -> list[int]:
    return [i for i, block in enumerate(blocks) if "cache_control" in block]


def test_anthropic_marks_tools_system_and_the_ends_of_this_request_and_the_previous_one():
    request = {
        "tools": [{"name": "a"}, {"name": "b"}],
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "q1"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "a1"}]},
            {"role": "user", "content": [{"type": "text", "text": "q2"}, {"type": "text", "text": "more"}]},
        ],
    }
    mark_anthropic(request, "5m")
    assert _marked(request["tools"]) == [1]
    assert request["system"] == [{"type": "text", "text": "Be brief.", "cache_control": MARK}]
    assert [_marked(m["content"]) for m in request["messages"]] == [[], [], [0], [], [1]]


def test_anthropic_first_call_marks_its_end_only_and_the_one_hour_ttl_is_on_every_mark():
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}], "system": "s"}
    mark_anthropic(request, "1h")
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert request["system"][0]["cache_control"] == hour
    assert request["messages"][0]["content"][0]["cache_control"] == hour


def test_openai_style_marks_turn_string_content_into_a_text_part():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "result"},
    ]
    mark_openai(messages)
    assert messages[0]["content"] == [{"type": "text", "text": "sys", "cache_control": MARK}]
    assert messages[1]["content"] == [{"type": "text", "text": "q1", "cache_control": MARK}]
    assert messages[2]["content"] is None
    assert messages[3]["content"] == [{"type": "text", "text": "result", "cache_control": MARK}]
