"""A small synchronous-over-httpx helper for e2e tests: one connection and its SSE stream."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from typing import Any

import httpx
from tests import evidence
from tests.acp_schema import check

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}},
}


class SseListener:
    """Reads one SSE stream in a thread; events (dicts with id/event/data) land in a queue. Each message is
    checked against the ACP schema (tests/acp_schema) by its connection's `conformance`."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        transcript: evidence.Transcript | None = None,
        conformance: check.Conformance | None = None,
    ) -> None:
        self.transcript = transcript or evidence.Transcript()
        self.conformance = conformance or check.Conformance(f"SSE stream of {url}")
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.status: int | None = None
        self.headers: httpx.Headers = httpx.Headers()
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        self._url = url
        self._headers = headers
        self._started = threading.Event()
        self._socket: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._started.wait(10)

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self._url, headers=self._headers) as response:
                self.status = response.status_code
                self.headers = response.headers
                self._socket = response.extensions["network_stream"].get_extra_info("socket")
                self._started.set()
                fields: dict[str, Any] = {}
                for line in response.iter_lines():
                    if line == "":
                        if "data" in fields:
                            fields["data"] = json.loads(fields["data"])
                            self.transcript.received(fields["data"])
                            self.conformance.received(fields["data"])
                            self.events.put(fields)
                        fields = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(": ")
                        fields[name] = value
        except (httpx.HTTPError, RuntimeError):
            pass
        finally:
            self._started.set()
            self.events.put({"eof": True})

    def next(self, timeout: float = 15) -> dict[str, Any]:
        event = self.events.get(timeout=timeout)
        check.raise_found()
        return event

    def until(self, predicate, timeout: float = 15) -> list[dict[str, Any]]:
        seen = []
        while True:
            event = self.next(timeout)
            assert "eof" not in event, f"stream ended; seen {seen}"
            seen.append(event)
            if predicate(event["data"]):
                return seen

    def close(self) -> None:
        """Drop the stream like a client going away (a blocked read in the thread wakes up)."""
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)
        self._thread.join(5)
        self._client.close()


class AcpHttp:
    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = headers or {}
        self.http = httpx.Client(timeout=30, headers=self.headers)
        self.conformance = check.Conformance(f"HTTP client of {url}")
        self.conformance.sent(INIT)
        response = self.http.post(url, json=INIT)
        assert response.status_code == 200, response.text
        self.initialize_result = response.json()
        self.conformance.received(self.initialize_result)
        check.raise_found()
        self.initialize_headers = response.headers
        self.connection_id = response.headers["Acp-Connection-Id"]
        self.transcript = evidence.Transcript()
        evidence.watch(self)
        self._closed = False

    def evidence_title(self) -> str:
        return f"HTTP client of {self.url} (connection {self.connection_id})"

    def evidence(self) -> str:
        return f"last protocol messages (posted →, read from its streams ←):\n{self.transcript.text()}"

    def finished(self) -> bool:
        return self._closed

    def post(self, message: dict[str, Any], **headers: str) -> httpx.Response:
        self.transcript.sent(message)
        self.conformance.sent(message)
        response = self.http.post(self.url, json=message, headers={"Acp-Connection-Id": self.connection_id, **headers})
        if response.status_code != 202:
            self.transcript.received(f"HTTP {response.status_code} {response.text}")
        return response

    def stream(self, **headers: str) -> SseListener:
        headers = {**self.headers, "Acp-Connection-Id": self.connection_id, **headers}
        return SseListener(self.url, headers, self.transcript, self.conformance)

    def new_session(self, listener: SseListener, cwd: str, request_id: int = 2) -> str:
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/new",
            "params": {"cwd": cwd, "mcpServers": []},
        }
        assert self.post(message).status_code == 202
        return listener.until(lambda d: d.get("id") == request_id)[-1]["data"]["result"]["sessionId"]

    def prompt(self, session_id: str, text: str, request_id: int = 3) -> httpx.Response:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return self.post({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params})

    def delete(self) -> httpx.Response:
        return self.http.delete(self.url, headers={"Acp-Connection-Id": self.connection_id})

    def close(self) -> None:
        self._closed = True
        self.http.close()


def is_response(request_id: int):
    return lambda data: data.get("id") == request_id and "method" not in data


def agent_text(events: list[dict[str, Any]]) -> str:
    return "".join(
        e["data"]["params"]["update"]["content"]["text"]
        for e in events
        if e["data"].get("method") == "session/update"
        and e["data"]["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
