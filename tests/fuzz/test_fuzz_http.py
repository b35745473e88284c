"""The HTTP routes and headers against the real app (fake agent, real uvicorn): whatever a client sends,
it gets a 2xx or a 4xx with a JSON body, never a 500, and the event stream carries only strict JSON."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.unit.transports.http.fake_agent import serve_fake

from iac_code.transports.http.app import HttpOptions, create_app

from .conftest import FUZZ, json_values
from .test_fuzz_jsonrpc import MESSAGE_FIELDS, strict_json

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
OK_OR_REFUSED = {200, 202, 400, 403, 404, 405, 406, 413, 415, 429}


class _ThreadServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # signals belong to the test process
        yield


class _Errors(logging.Handler):
    """Every ERROR the transport logs while the module runs: a handled bad request logs none. (The
    SDK's own connection logs a client's unknown notification at ERROR: that is not ours to judge.)"""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("iac_code") or record.name.startswith("uvicorn"):
            self.records.append(record)


ERRORS = _Errors()


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, str]]:
    """(url of /acp, a connection id) on a server running in a thread for the whole module."""
    logging.getLogger().addHandler(ERRORS)
    app = create_app(serve_fake, HttpOptions(max_body_bytes=64 * 1024))
    server = _ThreadServer(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        time.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/acp"
    conn_id = httpx.post(url, json=INIT).headers["acp-connection-id"]
    yield url, conn_id
    server.should_exit = True
    thread.join(10)
    logging.getLogger().removeHandler(ERRORS)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


# Header values a client library will send (no CR, LF, NUL or other controls), plus the ones that broke us.
HEADER_VALUE = st.one_of(
    st.lists(st.integers(0x20, 0xFF).filter(lambda c: c != 0x7F), max_size=40).map(bytes).map(bytes.strip),
    st.sampled_from([b"9" * 5000, "¹²".encode(), b"\xb9\xb2", b"-1", b"0", b"18446744073709551616", b""]),
)
CONTENT_TYPE = st.one_of(st.sampled_from(["application/json", "application/json; charset=utf-8"]), HEADER_VALUE)
BODY = st.one_of(
    st.binary(max_size=400),
    MESSAGE_FIELDS.map(lambda fields: json.dumps(fields).encode("utf-8", "surrogatepass")),
    json_values().map(lambda value: json.dumps(value).encode("utf-8", "surrogatepass")),
    st.integers(0, 3000).map(lambda depth: b"[" * depth + b"]" * depth),
)


def connection_header(conn_id: str, choice: Any) -> dict[str, Any]:
    if choice == "valid":
        return {"Acp-Connection-Id": conn_id}
    return {} if choice is None else {"Acp-Connection-Id": choice}


def check_response(response: httpx.Response) -> None:
    assert response.status_code in OK_OR_REFUSED, (response.status_code, response.text[:200])
    if response.status_code not in (202, 404, 405) and response.content:  # Starlette's 404/405 are plain text
        strict_json(response.json())


@settings(FUZZ, max_examples=150)
@given(BODY, CONTENT_TYPE, st.one_of(st.just("valid"), st.none(), HEADER_VALUE))
def test_post_bodies_and_headers(live: tuple[str, str], http: httpx.Client, body, content_type, connection) -> None:
    url, conn_id = live
    headers = {"Content-Type": content_type, **connection_header(conn_id, connection)}
    check_response(http.post(url, content=body, headers=headers))


@settings(FUZZ, max_examples=250)
@given(BODY)
# What broke before, tried first every run (generation differs a little between runs of the whole suite).
@example(b'{"jsonrpc":"2.0","id":null,"method":"initialize"}')
@example(b'{"jsonrpc":"2.0","id":1e999,"method":"session/new","params":{"cwd":"/tmp"}}')
@example(b'{"jsonrpc":"2.0","id":NaN,"method":"session/new","params":{"cwd":"/tmp"}}')
@example(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"\\ud800"}}')
@example(b"[" * 1000 + b"]" * 1000)
def test_post_bodies_on_a_live_connection(live: tuple[str, str], http: httpx.Client, body: bytes) -> None:
    url, conn_id = live
    headers = {"Content-Type": "application/json", "Acp-Connection-Id": conn_id}
    check_response(http.post(url, content=body, headers=headers))


@settings(FUZZ, max_examples=200)
@given(
    st.one_of(st.just("valid"), st.none(), HEADER_VALUE),
    st.fixed_dictionaries(
        {},
        optional={
            "Last-Event-ID": HEADER_VALUE,
            "Acp-Session-Id": HEADER_VALUE,
            "Accept": st.one_of(st.just(b"text/event-stream"), HEADER_VALUE),
            "Origin": HEADER_VALUE,
            "Authorization": HEADER_VALUE,
        },
    ),
    st.sampled_from(["GET", "DELETE", "PUT", "PATCH"]),
)
def test_stream_and_other_methods_with_any_headers(live, http: httpx.Client, connection, extra, method) -> None:
    url, conn_id = live
    if method == "DELETE" and connection == "valid":
        connection = None  # closing the module's connection would end the other examples' stream
    headers = {**connection_header(conn_id, connection), **extra}
    with http.stream(method, url, headers=headers) as response:
        if response.status_code != 200 or method != "GET":
            response.read()
            check_response(response)
        else:
            assert response.headers["content-type"].startswith("text/event-stream")


def test_every_event_the_stream_carried_was_strict_json(live, http: httpx.Client) -> None:
    """After the fuzzing, what the agent answered on the module's connection is all valid JSON."""
    url, conn_id = live
    http.post(
        url,
        json={"jsonrpc": "2.0", "id": "last", "method": "session/list", "params": {}},
        headers={"Acp-Connection-Id": conn_id},
    )
    events = 0
    with http.stream("GET", url, headers={"Acp-Connection-Id": conn_id, "Last-Event-ID": "0"}) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                message = strict_json(json.loads(line[6:]))
                events += 1
                if message.get("id") == "last":
                    break
    assert events >= 1
    assert not ERRORS.records, [record.getMessage() for record in ERRORS.records[:5]]
