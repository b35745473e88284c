"""A model call that fails for good answers `session/prompt` with a JSON-RPC error, over raw JSON-RPC on stdio:
-32000 for a key the provider refuses (editors start their sign-in flow), -32603 with the provider's words
(secrets out) otherwise, after retries; what the turn streamed before the failure is stored, and a
session/load in another process shows it."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import AgentProcess, answer_text, updates
from tests.e2e.sessions.flows import replayed

pytestmark = pytest.mark.timeout(120)

SECRET = "sk-test-0123456789abcdefghijklmnop"  # the model key: long enough to count as a secret


def load(agent: AgentProcess, session_id: str, cwd: str) -> list[dict]:
    request = agent.start_request("session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": []})
    response, before = agent.response(request)
    assert "result" in response, response
    return replayed(before, session_id)


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_authentication_required(spawn, model, workspace, status):
    model.add({"status": status, "text": "invalid api key"}, {"text": "never asked: a refused key is not retried"})
    agent = spawn()
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "hi")
    assert response["error"]["code"] == -32000
    assert response["error"]["message"].startswith("Authentication required")
    assert "IAC_CODE_API_KEY" in response["error"]["message"]
    assert len(model.requests) == 1 and answer_text(seen) == ""


def test_a_server_error_after_retries_is_an_internal_error_with_the_providers_words_and_the_answer_so_far_kept(
    spawn, model, workspace
):
    failure = {"status": 500, "text": f"upstream overloaded (request signed with {SECRET})"}
    model.add(
        {"text": "Let me look at the files.", "tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]},
        failure,
        failure,
        failure,  # the SDK's two retries (the fake server says to retry after 10 ms)
    )
    first = spawn(IAC_CODE_API_KEY=SECRET)
    session_id = first.new_session(workspace)
    response, seen = first.prompt(session_id, "what is here?")
    error = response["error"]
    assert error["code"] == -32603
    assert "HTTP 500: upstream overloaded" in error["message"] and SECRET not in str(error)
    assert len(model.requests) == 4, "the failing call was retried before the turn failed"
    live_ids = {u["messageId"] for u in updates(seen, "agent_message_chunk")}
    (call,) = updates(seen, "tool_call")
    first.close()

    shown = load(spawn(), session_id, str(workspace))
    (kept,) = [u for u in shown if u["sessionUpdate"] == "agent_message_chunk"]
    assert kept["content"]["text"] == "Let me look at the files." and {kept["messageId"]} == live_ids
    ends = [u for u in shown if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == call["toolCallId"]]
    assert [u["status"] for u in ends] == ["completed"]


def test_an_answer_cut_mid_stream_is_an_error_and_the_part_shown_is_kept_under_its_id(spawn, model, workspace):
    model.add({"text": "An answer that is cut off before its end", "chunk_chars": 6, "truncate": True})
    first = spawn()
    session_id = first.new_session(workspace)
    response, seen = first.prompt(session_id, "explain")
    assert response["error"]["code"] == -32603 and "stream ended" in response["error"]["message"]
    streamed = updates(seen, "agent_message_chunk")
    part = "".join(u["content"]["text"] for u in streamed)
    assert part and "An answer that is cut off before its end".startswith(part)
    first.close()

    shown = load(spawn(), session_id, str(workspace))
    (kept,) = [u for u in shown if u["sessionUpdate"] == "agent_message_chunk"]
    assert kept["content"]["text"] == part
    assert {u["messageId"] for u in streamed} == {kept["messageId"]}
