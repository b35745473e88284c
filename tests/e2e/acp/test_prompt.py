"""session/prompt on the wire: streaming, content blocks, stop reasons, slash commands, big payloads."""

from __future__ import annotations

from tests.e2e.acp.wire import answer_text, updates


def test_prompt_streams_chunks_and_answers_usage(agent, model, workspace):
    model.add(
        {
            "text": "Hello from the model",
            "thinking": "pondering",
            "usage": {"prompt_tokens": 11, "completion_tokens": 5},
        }
    )
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "Write a VPC\nwith two subnets")
    assert response["result"] == {
        "stopReason": "end_turn",
        "usage": {
            "inputTokens": 11,
            "outputTokens": 5,
            "thoughtTokens": 0,
            "cachedReadTokens": 0,
            "cachedWriteTokens": 0,
            "totalTokens": 16,
        },
    }
    assert answer_text(seen) == "Hello from the model"
    thoughts = "".join(u["content"]["text"] for u in updates(seen, "agent_thought_chunk"))
    assert thoughts == "pondering"
    assert updates(seen, "session_info_update") == [{"sessionUpdate": "session_info_update", "title": "Write a VPC"}]
    (usage,) = updates(seen, "usage_update")
    assert usage["used"] > 0 and usage["size"] > usage["used"]
    assert all(m["params"]["sessionId"] == session_id for m in seen)


def test_content_blocks_reach_the_model(agent, model, workspace):
    model.add({"text": "ok"})
    session_id = agent.new_session(workspace)
    blocks = [
        {"type": "text", "text": "Review these"},
        {
            "type": "resource",
            "resource": {"uri": "file:///x/main.tf", "text": 'resource "a" "b" {}', "mimeType": "text/plain"},
        },
        {"type": "resource_link", "uri": "file:///x/vars.tf", "name": "vars.tf"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
    ]
    response, _ = agent.prompt(session_id, blocks)
    assert response["result"]["stopReason"] == "end_turn"
    seen_by_model = model.requests[-1]["messages"][-1]["content"]
    for expected in (
        "Review these",
        "file:///x/main.tf",
        'resource "a" "b" {}',
        "file:///x/vars.tf",
        "vars.tf",
        "[image: image/png]",
        "[audio: audio/wav]",
    ):
        assert expected in seen_by_model


def test_stop_reasons_come_from_their_causes(spawn, model, workspace):
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add({"text": "cut", "finish_reason": "length"}, {"refusal": "no", "finish_reason": "content_filter"})
    assert agent.prompt(session_id, "long")[0]["result"]["stopReason"] == "max_tokens"
    assert agent.prompt(session_id, "bad")[0]["result"]["stopReason"] == "refusal"

    limited = spawn(IAC_CODE_MAX_TURNS="1")
    session_id = limited.new_session(workspace)
    model.add({"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]})
    assert limited.prompt(session_id, "loop")[0]["result"]["stopReason"] == "max_turn_requests"


def test_slash_commands_are_answered_by_the_agent(agent, model, workspace):
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "/help")
    assert response["result"]["stopReason"] == "end_turn"
    assert "/compact" in answer_text(seen) and "/clear" in answer_text(seen)
    model.add({"text": "first answer"})
    agent.prompt(session_id, "remember this")
    response, seen = agent.prompt(session_id, "/clear")
    assert "cleared" in answer_text(seen)
    model.add({"text": "fresh"})
    agent.prompt(session_id, "again")
    assert "remember this" not in str(model.requests[-1]["messages"])
    assert model.requests[-1]["messages"][-1]["content"] == "again"


def test_compact_command(agent, model, workspace):
    model.add({"text": "one"}, {"text": "two"}, {"text": "SUMMARY of the talk"})
    session_id = agent.new_session(workspace)
    agent.prompt(session_id, "hello")
    agent.prompt(session_id, "more")
    response, seen = agent.prompt(session_id, "/compact")
    assert response["result"]["stopReason"] == "end_turn"
    assert "compacted" in answer_text(seen)
    model.add({"text": "after"})
    agent.prompt(session_id, "next")
    assert "SUMMARY of the talk" in str(model.requests[-1]["messages"])


def test_five_megabyte_prompt_and_answer(agent, model, workspace):
    big_answer = "y" * 5_000_000
    model.add({"text": big_answer, "chunk_chars": 65536})
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "x" * 5_000_000)
    assert response["result"]["stopReason"] == "end_turn"
    assert model.requests[-1]["messages"][-1]["content"] == "x" * 5_000_000
    assert answer_text(seen) == big_answer


def test_a_second_prompt_while_one_runs_is_rejected(agent, model, workspace):
    model.add({"text": "slow answer", "delay": 0.2, "chunk_chars": 4})
    session_id = agent.new_session(workspace)
    first = agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "a"}]})
    agent.until(
        lambda m: (
            m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
    )
    second = agent.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "b"}]})
    assert second["error"]["code"] == -32602
    assert second["error"]["data"] == {"sessionId": "a prompt is already running for this session"}
    agent.notify("session/cancel", {"sessionId": session_id})
    response, _ = agent.response(first)
    assert response["result"]["stopReason"] == "cancelled"
    assert len(model.requests) == 1
