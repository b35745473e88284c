"""Session streams (GET with Acp-Session-Id) on two real instances sharing PostgreSQL: the session's messages
come on its stream held by one instance while the connection's agent runs on the same or the other one,
never twice across the connection stream; closing it mid-turn sends the rest to the connection stream.
(A kill -9 of its instance mid-turn: test_instance_loss.py.)

Streams and requests go to chosen instances (their own addresses), so each test says where each part is."""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from tests.e2e.cluster.conftest import Cluster
from tests.e2e.http.client import AcpHttp, SseListener, agent_text, is_response
from tests.e2e.http.server_process import ServerProcess

SESSION = "Acp-Session-Id"


def session_stream(client: AcpHttp, at: ServerProcess, session_id: str, **headers: str) -> SseListener:
    listener = SseListener(at.url, {"Acp-Connection-Id": client.connection_id, SESSION: session_id, **headers})
    assert listener.status == 200
    return listener


def none_came_since(connection_events: SseListener, client: AcpHttp, first_id: int) -> bool:
    """No event from `first_id` on came on the connection stream (up to the answer to a request sent now;
    before `first_id`, what the agent sent when the session was created)."""
    assert client.post({"jsonrpc": "2.0", "id": 99, "method": "session/list", "params": {}}).status_code == 202
    return [e for e in connection_events.until(is_response(99)) if int(e["id"]) >= first_id][:-1] == []


def until_closed(database_url: str, connection_id: str) -> None:
    """Wait until the database records no session stream of the connection (its instance closed it)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        query = "SELECT session_streams = '{}' FROM iac_connections WHERE connection_id = %s"
        while conn.execute(query, [connection_id]).fetchone() != (True,):
            time.sleep(0.02)


def ids(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["id"]) for e in events]


@pytest.mark.parametrize("host", ["i1", "i2"])
def test_a_prompts_updates_and_answer_come_on_the_session_stream_only(two: Cluster, model, host):
    a, b = two.instances["i1"], two.instances["i2"]  # the connection stream on a, the session stream on b
    text = "".join(f"{n:02d} " for n in range(30))
    model.add({"text": text, "chunk_chars": 6})
    client = AcpHttp(two.instances[host].url)
    connection_events = SseListener(a.url, {"Acp-Connection-Id": client.connection_id})
    session_id = client.new_session(connection_events, str(two.workspace))
    session_events = session_stream(client, b, session_id)

    assert client.prompt(session_id, "count").status_code == 202
    on_session = session_events.until(is_response(3))
    assert agent_text(on_session) == text and on_session[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert none_came_since(connection_events, client, min(ids(on_session)))
    assert ids(on_session) == sorted(set(ids(on_session)))
    for stream in (session_events, connection_events):
        stream.close()
    client.close()


def test_closing_the_session_stream_mid_turn_sends_the_rest_to_the_connection_stream(
    two: Cluster, model, pg_module_url
):
    a, b = two.instances["i1"], two.instances["i2"]
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "echo from-the-tool"}}]}, {"text": "all done"})
    client = AcpHttp(a.url)
    connection_events = SseListener(b.url, {"Acp-Connection-Id": client.connection_id})
    session_id = client.new_session(connection_events, str(two.workspace))
    session_events = session_stream(client, b, session_id)
    assert client.prompt(session_id, "run it").status_code == 202
    before = session_events.until(lambda d: d.get("method") == "session/request_permission")

    session_events.close()  # mid-turn: the agent waits for the answer
    until_closed(pg_module_url, client.connection_id)
    allow = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    assert client.post({"jsonrpc": "2.0", "id": before[-1]["data"]["id"], "result": allow}).status_code == 202
    rest = [e for e in connection_events.until(is_response(3)) if int(e["id"]) > max(ids(before))]
    assert agent_text(rest) == "all done" and "from-the-tool" in str([e["data"] for e in rest])
    connection_events.close()
    client.close()
