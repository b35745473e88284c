"""GET /metrics on the real HTTP server: what moved after a scripted session (a turn, tool calls, permission
decisions by source, model latency and tokens, store latency, requests, open streams), behind the token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tests.e2e.http.client import AcpHttp, SseListener, is_response
from tests.e2e.http.server_process import http_server

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(base: str, **headers: str) -> Samples:
    response = httpx.get(f"{base}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, matching: Callable[[dict[str, str]], bool] = lambda _: True) -> float:
    return sum(v for (n, labels), v in samples.items() if n == name and matching(dict(labels)))


def answer(client: AcpHttp, stream: SseListener, option: str) -> None:
    asked = stream.until(lambda d: d.get("method") == "session/request_permission")[-1]["data"]
    outcome: dict[str, Any] = {"outcome": "selected", "optionId": option}
    assert client.post({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": outcome}}).status_code == 202


def test_a_scripted_session_moves_the_metrics(live, model):
    (live.workspace / "main.tf").write_text("# main\n")
    usage = {"prompt_tokens": 120, "completion_tokens": 7}
    model.add(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}], "usage": usage},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.tf", "content": "#\n"}}], "usage": usage},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "b.tf", "content": "#\n"}}], "usage": usage},
        {"text": "done", "usage": usage},
    )
    before = scrape(live.base)
    client = AcpHttp(live.url)
    stream = client.stream()
    session_id = client.new_session(stream, str(live.workspace))
    assert client.prompt(session_id, "read, then write twice").status_code == 202
    answer(client, stream, "allow_once")
    answer(client, stream, "reject_once")
    assert stream.until(is_response(3))[-1]["data"]["result"]["stopReason"] == "end_turn"

    during = scrape(live.base)  # the SSE stream is still open
    after = {key: during.get(key, 0.0) - before.get(key, 0.0) for key in during}

    assert value(after, "iac_code_turns_total", stop_reason="end_turn") == 1
    assert value(after, "iac_code_tool_calls_total", tool="read_file", outcome="completed") == 1
    assert value(after, "iac_code_tool_calls_total", tool="write_file", outcome="completed") == 1
    assert value(after, "iac_code_tool_calls_total", tool="write_file", outcome="refused") == 1
    assert value(after, "iac_code_tool_call_seconds_count", tool="write_file") == 1  # the refused one never ran
    assert value(after, "iac_code_permission_decisions_total", source="mode", decision="allowed") == 1
    assert value(after, "iac_code_permission_decisions_total", source="user", decision="allowed") == 1
    assert value(after, "iac_code_permission_decisions_total", source="user", decision="denied") == 1

    scripted = lambda labels: labels.get("model") == "scripted-model"  # noqa: E731
    completed = lambda labels: scripted(labels) and labels.get("outcome") == "completed"  # noqa: E731
    assert total(after, "iac_code_model_call_seconds_count", completed) == 4
    assert total(after, "iac_code_model_call_seconds_sum", completed) > 0
    assert total(after, "iac_code_model_tokens_total", lambda lb: scripted(lb) and lb["direction"] == "input") == 480
    assert total(after, "iac_code_model_tokens_total", lambda lb: scripted(lb) and lb["direction"] == "output") == 28

    assert value(after, "iac_code_store_seconds_count", operation="create") == 1
    assert value(after, "iac_code_store_seconds_count", operation="append") >= 8  # prompt, 4 answers, 3 results
    assert value(after, "iac_code_http_requests_total", route="/acp", method="POST", status="200") == 1
    assert value(after, "iac_code_http_requests_total", route="/acp", method="POST", status="202") == 4
    assert value(after, "iac_code_http_requests_total", route="/acp", method="GET", status="200") == 1
    assert value(during, "iac_code_open_streams") >= 1
    assert value(during, "iac_code_open_connections") >= 1
    assert value(during, "iac_code_open_sessions") >= 1
    assert value(during, "iac_code_process_resident_memory_bytes") > 0

    stream.close()
    assert client.delete().status_code == 200
    client.close()
    gone = scrape(live.base)
    assert value(gone, "iac_code_open_connections") == value(during, "iac_code_open_connections") - 1


def test_a_path_that_is_no_route_is_counted_as_other(live):
    before = scrape(live.base)
    for path in ("/nothing-here", "/another/path"):
        assert httpx.get(f"{live.base}{path}", timeout=10).status_code == 404
    after = scrape(live.base)
    other = {"route": "other", "method": "GET", "status": "404"}
    assert (
        value(after, "iac_code_http_requests_total", **other) - value(before, "iac_code_http_requests_total", **other)
        == 2
    )
    assert not any("nothing-here" in str(labels) for _, labels in after)


def test_metrics_need_the_token_when_one_is_set(model):
    token = "metrics-token-for-tests"
    with http_server(model.url, env={"IACCODE_ACP_HTTP_TOKEN": token}) as server:
        refused = httpx.get(f"{server.base}/metrics", timeout=10)
        assert refused.status_code == 401
        samples = scrape(server.base, Authorization=f"Bearer {token}")
        assert value(samples, "iac_code_http_requests_total", route="/metrics", method="GET", status="401") == 1


def test_an_instance_on_postgresql_reports_its_store_and_its_connections(model, pg_url):
    with http_server(model.url, env={"IAC_CODE_DATABASE_URL": pg_url, "IAC_CODE_INSTANCE_ID": "m1"}) as server:
        model.add({"text": "stored in PostgreSQL"})
        client = AcpHttp(server.url)
        stream = client.stream()
        session_id = client.new_session(stream, str(server.workspace))
        assert client.prompt(session_id, "hello").status_code == 202
        assert stream.until(is_response(3))[-1]["data"]["result"]["stopReason"] == "end_turn"
        samples = scrape(server.base)
        assert value(samples, "iac_code_turns_total", stop_reason="end_turn") == 1
        assert value(samples, "iac_code_store_seconds_count", operation="create") == 1
        assert value(samples, "iac_code_store_seconds_count", operation="append") >= 2  # the prompt, the answer
        assert value(samples, "iac_code_open_connections") == 1
        assert value(samples, "iac_code_open_sessions") == 1
        stream.close()
        client.close()
