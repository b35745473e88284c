"""Losing parts under a running cluster: kill -9 of the instance holding a stream (a connection stream, a
session stream), of the instance running a session's turn, and PostgreSQL restarting while clients prompt."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
from tests.e2e.cluster.conftest import Cluster, cluster
from tests.e2e.cluster.test_session_streams import ids, none_came_since, session_stream
from tests.e2e.http.client import INIT, AcpHttp, SseListener, agent_text, is_response


def _instance(headers: httpx.Headers) -> str:
    return headers["iac-instance-id"]


def _until_eof(stream: SseListener) -> list[dict]:
    events = []
    while "eof" not in (event := stream.next(timeout=10)):
        events.append(event)
    return events


def test_kill_9_of_the_stream_holder_mid_answer_loses_and_repeats_nothing(nginx_available, model, pg_url):
    text = "".join(f"{n:03d} " for n in range(80))
    model.add({"text": text, "chunk_chars": 4, "delay": 0.03})
    with cluster(model.url, pg_url) as running:
        client = AcpHttp(running.url)
        first = client.stream()
        host, holder = _instance(client.initialize_headers), _instance(first.headers)
        assert host != holder  # round-robin: the agent runs on one instance, the stream is held by the other
        session_id = client.new_session(first, str(running.workspace))
        assert client.prompt(session_id, "count").status_code == 202
        seen = first.until(lambda d: d.get("method") == "session/update")
        seen += [first.next() for _ in range(5)]

        running.instances[holder].process.kill()  # SIGKILL: no goodbye
        seen += _until_eof(first)  # whatever reached the client before its stream broke
        second = client.stream(**{"Last-Event-ID": seen[-1]["id"]})
        assert _instance(second.headers) == host
        seen += second.until(is_response(3))
        second.close()
        client.close()

    ids = [int(e["id"]) for e in seen]
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # no gap, no duplicate
    assert seen[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert agent_text(seen) == text


COUNTING = "".join(f"{n:03d} " for n in range(80))


@dataclass
class _CountingTurn:
    client: AcpHttp
    running: Cluster
    session_id: str
    connection_events: SseListener
    session_events: SseListener
    seen: list[dict]  # what the session stream sent so far


@contextlib.contextmanager
def _counting_on_a_session_stream(model, pg_url) -> Iterator[_CountingTurn]:
    """A turn streaming COUNTING, hosted on i1, its session stream held by i2, which has sent a few updates."""
    model.add({"text": COUNTING, "chunk_chars": 4, "delay": 0.03})
    with cluster(model.url, pg_url) as running:
        host, holder = running.instances["i1"], running.instances["i2"]
        client = AcpHttp(host.url)
        connection_events = SseListener(host.url, {"Acp-Connection-Id": client.connection_id})
        session_id = client.new_session(connection_events, str(running.workspace))
        session_events = session_stream(client, holder, session_id)
        assert client.prompt(session_id, "count").status_code == 202
        seen = session_events.until(lambda d: d.get("method") == "session/update")
        seen += [session_events.next() for _ in range(5)]
        yield _CountingTurn(client, running, session_id, connection_events, session_events, seen)


def test_kill_9_of_the_session_streams_instance_then_a_reconnect_elsewhere_loses_and_repeats_nothing(
    nginx_available, model, pg_url
):
    with _counting_on_a_session_stream(model, pg_url) as turn:
        turn.running.instances["i2"].process.kill()  # SIGKILL: no goodbye, no close
        seen = turn.seen + _until_eof(turn.session_events)  # whatever reached the client before its stream broke
        resume = {"Last-Event-ID": seen[-1]["id"]}
        second = session_stream(turn.client, turn.running.instances["i1"], turn.session_id, **resume)
        seen += second.until(is_response(3))
        assert none_came_since(turn.connection_events, turn.client, min(ids(seen)))
        for stream in (second, turn.connection_events):
            stream.close()
        turn.client.close()

    assert ids(seen) == sorted(set(ids(seen)))  # in order, none twice
    assert agent_text(seen) == COUNTING  # none lost
    assert seen[-1]["data"]["result"]["stopReason"] == "end_turn"


def test_kill_9_of_the_session_streams_instance_and_no_reconnect_the_rest_comes_on_the_connection_stream(
    nginx_available, model, pg_url
):
    with _counting_on_a_session_stream(model, pg_url) as turn:
        turn.running.instances["i2"].process.kill()
        on_session = turn.seen + _until_eof(turn.session_events)
        # Nobody reconnects the session stream: once the dead holder's grace is over, what it had not sent
        # (by its last record of what it sent) moves to the connection stream.
        on_connection = turn.connection_events.until(is_response(3), timeout=30)
        turn.connection_events.close()
        turn.client.close()

    said, moved = agent_text(on_session), agent_text(on_connection)
    assert COUNTING.startswith(said) and COUNTING.endswith(moved)  # each in order
    assert len(said) + len(moved) >= len(COUNTING)  # none lost (its last quarter of a second may come twice)
    assert on_connection[-1]["data"]["result"]["stopReason"] == "end_turn"


def test_a_session_is_taken_over_after_its_instance_dies_and_goes_on(nginx_available, model, pg_url):
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 20"}}]})
    with cluster(model.url, pg_url) as running:
        client = AcpHttp(running.url)
        stream = client.stream()
        host, holder = _instance(client.initialize_headers), _instance(stream.headers)
        assert host != holder
        session_id = client.new_session(stream, str(running.workspace))
        assert client.prompt(session_id, "run a long command").status_code == 202
        asked = stream.until(lambda d: d.get("method") == "session/request_permission")[-1]["data"]
        allow = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        assert client.post({"jsonrpc": "2.0", "id": asked["id"], "result": allow}).status_code == 202
        stream.until(lambda d: d.get("params", {}).get("update", {}).get("status") == "in_progress")
        time.sleep(0.3)  # the command runs

        running.instances[host].process.kill()
        # The stream's instance adopts the connection and answers the prompt its dead host never will.
        interrupted = stream.until(is_response(3), timeout=20)[-1]["data"]
        assert interrupted["error"]["code"] == -32603 and "load the session" in interrupted["error"]["data"]["reason"]

        # Loading waits out the dead instance's lease, then replays the history as repaired on load.
        model.add({"text": "back on track"})
        load = {"sessionId": session_id, "cwd": str(running.workspace), "mcpServers": []}
        assert client.post({"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": load}).status_code == 202
        replayed = stream.until(is_response(4), timeout=20)
        assert "result" in replayed[-1]["data"], replayed[-1]
        assert any("interrupted" in json.dumps(e["data"]) for e in replayed)
        assert client.prompt(session_id, "go on", request_id=5).status_code == 202
        rest = stream.until(is_response(5))
        assert rest[-1]["data"]["result"]["stopReason"] == "end_turn" and agent_text(rest) == "back on track"
        # The model was sent the repaired history: the interrupted call has its result (else it answers 400).
        tool_results = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
        assert len(tool_results) == 1 and "interrupted" in tool_results[0]["content"]
        stream.close()
        client.close()


def test_postgresql_restarting_under_load(nginx_available, model, pg_url, postgres_server):
    with cluster(model.url, pg_url) as running:
        clients = [AcpHttp(running.url) for _ in range(3)]
        streams = [client.stream() for client in clients]
        sessions = [c.new_session(s, str(running.workspace)) for c, s in zip(clients, streams, strict=True)]
        statuses: list[int] = []
        answers: list[list[tuple[float, dict]]] = [[] for _ in clients]  # per client: (sent at, answer)
        stop = threading.Event()

        def prompt_in_a_loop(n: int) -> None:
            request_id = 10
            while not stop.is_set():
                request_id += 1
                sent_at = time.monotonic()
                status = clients[n].prompt(sessions[n], "hello", request_id=request_id).status_code
                statuses.append(status)
                if status == 202:  # answered, or failed cleanly (a store write refused) by an error response
                    answers[n].append((sent_at, streams[n].until(is_response(request_id), timeout=60)[-1]["data"]))
                else:
                    time.sleep(0.05)

        workers = [threading.Thread(target=prompt_in_a_loop, args=(n,)) for n in range(len(clients))]
        for worker in workers:
            worker.start()
        time.sleep(1)
        postgres_server.stop()
        try:
            with httpx.Client(timeout=10) as http, ThreadPoolExecutor() as pool:  # meanwhile: refused, not hanging
                other = pool.submit(clients[0].prompt, sessions[0], "now?", request_id=999)
                initialize = pool.submit(http.post, running.url, json=INIT)
                health = [pool.submit(http.get, f"{server.base}/health") for server in running.instances.values()]
                assert other.result().status_code == 503 and "database" in other.result().json()["error"]
                assert initialize.result().status_code == 503
                for answer in health:  # the balancer is told
                    assert answer.result().status_code == 503 and answer.result().json()["database"] == "unreachable"
        finally:
            postgres_server.start()
        restarted = time.monotonic()

        def recovered() -> bool:
            return all(
                any(sent > restarted and "result" in answer for sent, answer in answered) for answered in answers
            )

        while not recovered() and time.monotonic() < restarted + 20:
            time.sleep(0.1)
        stop.set()
        for worker in workers:
            worker.join(60)

        assert recovered(), "the servers did not recover by themselves"
        assert set(statuses) <= {202, 503}, statuses  # refused cleanly, never a 500
        assert all(answered and answered[0][1]["result"]["stopReason"] == "end_turn" for answered in answers)
        with httpx.Client(timeout=10) as http:
            assert all(http.get(f"{s.base}/health").status_code == 200 for s in running.instances.values())
        for stream, client in zip(streams, clients, strict=True):
            stream.close()
            client.close()
