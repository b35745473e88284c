"""Turns over HTTP against the real agent: permission by POST, reconnect, isolation, large messages."""

from __future__ import annotations

import json

from tests.e2e.http.client import AcpHttp, agent_text, is_response


def test_permission_answered_by_post(live, model):
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "# ok\n"}}]},
        {"text": "written"},
    )
    client = AcpHttp(live.url)
    stream = client.stream()
    session_id = client.new_session(stream, str(live.workspace))
    assert client.prompt(session_id, "write main.tf").status_code == 202

    asked = stream.until(lambda d: d.get("method") == "session/request_permission")[-1]["data"]
    assert asked["params"]["sessionId"] == session_id
    answer = {
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    }
    assert client.post(answer).status_code == 202

    rest = stream.until(is_response(3))
    assert rest[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert (live.workspace / "main.tf").read_text() == "# ok\n"
    assert agent_text(rest) == "written"
    stream.close()
    client.close()


def test_reconnect_with_last_event_id_has_no_gap_and_no_duplicate(live, model):
    text = "".join(f"{n:03d} " for n in range(60))
    model.add({"text": text, "chunk_chars": 4, "delay": 0.02})
    client = AcpHttp(live.url)
    first = client.stream()
    session_id = client.new_session(first, str(live.workspace))
    assert client.prompt(session_id, "count").status_code == 202
    before = [first.until(lambda d: d.get("method") == "session/update")[-1]]
    before += [first.next() for _ in range(5)]
    first.close()  # the client drops mid-answer; the agent keeps going

    second = client.stream(**{"Last-Event-ID": before[-1]["id"]})
    after = second.until(is_response(3))
    second.close()

    ids = [int(e["id"]) for e in before + after]
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    assert after[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert agent_text(before + after) == text
    client.close()


def test_two_connections_are_isolated(live, model):
    model.add({"text": "for A only"})
    a, b = AcpHttp(live.url), AcpHttp(live.url)
    assert a.connection_id != b.connection_id
    stream_a, stream_b = a.stream(), b.stream()
    session_a = a.new_session(stream_a, str(live.workspace))
    session_b = b.new_session(stream_b, str(live.workspace))
    a.prompt(session_a, "hello")
    assert agent_text(stream_a.until(is_response(3))) == "for A only"

    # B cannot drive A's session, and none of A's traffic reached B's stream.
    b.prompt(session_a, "steal", request_id=7)
    seen_by_b = stream_b.until(is_response(7))
    assert "error" in seen_by_b[-1]["data"]
    assert all(session_a not in json.dumps(e["data"]) or e["data"].get("id") == 7 for e in seen_by_b)
    assert all(e["data"].get("params", {}).get("sessionId") in (None, session_b) for e in seen_by_b)
    for stream in (stream_a, stream_b):
        stream.close()
    a.close()
    b.close()


def test_five_megabyte_messages_pass_both_ways(live, model):
    big_reply = "r" * (5 * 1024 * 1024)
    model.add({"text": big_reply, "chunk_chars": len(big_reply)})
    client = AcpHttp(live.url)
    stream = client.stream()
    session_id = client.new_session(stream, str(live.workspace))
    big_prompt = "p" * (5 * 1024 * 1024)
    assert client.prompt(session_id, big_prompt).status_code == 202
    events = stream.until(is_response(3), timeout=60)
    assert events[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert agent_text(events) == big_reply
    user_turn = model.requests[-1]["messages"][-1]
    assert big_prompt in json.dumps(user_turn)
    stream.close()
    client.close()
