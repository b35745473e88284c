"""Bad input of every kind answers the seed's codes and the server keeps serving; process lifecycle."""

from __future__ import annotations

import signal

import pytest
from tests.e2e.acp.wire import answer_text


@pytest.mark.parametrize(
    ("line", "code", "expected_id"),
    [
        ("{not json", -32700, None),
        ("[1, 2]", -32600, None),
        ('"text"', -32600, None),
        ('{"jsonrpc": "2.0", "id": 7}', -32600, 7),
        ('{"jsonrpc": "1.0", "id": 8, "method": "initialize"}', -32600, 8),
        ('{"jsonrpc": "2.0", "id": 9, "method": 42}', -32600, 9),
        ('{"jsonrpc": "2.0", "id": 10, "method": "session/new", "params": "x"}', -32600, 10),
    ],
)
def test_malformed_input_is_answered_and_serving_goes_on(agent, line, code, expected_id):
    agent.send_line(line)
    error = agent.next()
    assert error["id"] == expected_id and error["error"]["code"] == code
    assert agent.result("initialize", {"protocolVersion": 1})["protocolVersion"] == 1


def test_bad_params_name_the_field(agent, workspace):
    assert agent.call("no/such/method", {})["error"]["code"] == -32601
    wrong_type = agent.call("session/new", {"cwd": 42, "mcpServers": []})["error"]
    assert wrong_type["code"] == -32602 and "cwd" in wrong_type["data"]
    unknown = agent.call("session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]})["error"]
    assert unknown == {"code": -32602, "message": "Invalid params", "data": {"sessionId": "Session not found"}}
    session_id = agent.new_session(workspace)
    bad_block = agent.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text"}]})["error"]
    assert bad_block["code"] == -32602 and any(key.startswith("prompt.0") for key in bad_block["data"])
    no_params = agent.call("session/prompt")["error"]
    assert no_params["code"] == -32602
    agent.notify("session/cancel", {"sessionId": "nope"})  # a notification never gets an answer
    assert agent.result("session/list", {})["sessions"] is not None


def test_concurrent_sessions_do_not_cross_talk(agent, model, workspace):
    model.add(lambda body: {"text": f"echo {body['messages'][-1]['content']}", "chunk_chars": 2, "delay": 0.01})
    model.add(lambda body: {"text": f"echo {body['messages'][-1]['content']}", "chunk_chars": 2, "delay": 0.01})
    first, second = agent.new_session(workspace), agent.new_session(workspace)
    ids = {
        agent.start_request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": word}]}): sid
        for sid, word in ((first, "alpha"), (second, "beta"))
    }
    by_session: dict[str, list] = {first: [], second: []}
    answered = 0
    while answered < 2:
        message = agent.next()
        if message.get("id") in ids:
            assert message["result"]["stopReason"] == "end_turn"
            answered += 1
        elif message.get("method") == "session/update":
            by_session[message["params"]["sessionId"]].append(message)
    assert answer_text(by_session[first]) == "echo alpha"
    assert answer_text(by_session[second]) == "echo beta"


def test_sigterm_cancels_the_turn_and_exits_zero(spawn, model, workspace):
    model.add({"text": "a long answer", "chunk_chars": 1, "delay": 0.5})
    agent = spawn()
    session_id = agent.new_session(workspace)
    agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    agent.until(
        lambda m: (
            m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
    )
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.proc.wait(10) == 0


def test_stdin_eof_exits_zero(spawn):
    assert spawn().close() == 0
