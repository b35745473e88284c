"""A scripted OpenAI-compatible chat-completions server on real HTTP, for tests.

It runs in a background thread of the test process on 127.0.0.1 (random port), so the real
`openai` SDK (and anything built on it) talks to it exactly as to the real API.

A Reply is a dict with optional keys:
  text, thinking (streamed as `delta.reasoning_content`), refusal (streamed as `delta.refusal`),
  tool_calls [{"name", "arguments": dict|str, "id"?}], finish_reason, usage
  {"prompt_tokens", "completion_tokens"}, status (HTTP error instead), delay (seconds between
  chunks), chunk_chars (text chunk size), truncate (stop mid-stream, no finish, no [DONE]),
  hang (send the first content chunk, then block until the client goes away or the server stops).
A reply may also be a callable `(request_body) -> Reply`. Without a scripted `usage`, the usage is
estimated (4 characters a token) and the prompt cache simulated (tests/fakes/prompt_cache.py); a scripted
`usage` may name its `cached_tokens`. `raw_requests` keeps each request's body as its bytes.

`ScriptedServer` holds the HTTP machinery shared with the Anthropic fake.
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.prompt_cache import Cached, PrefixCache, PromptCache

Reply = dict[str, Any]
ReplySource = Reply | Callable[[dict[str, Any]], Reply]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


class DanglingToolCalls(Exception):
    """The request's history breaks the tool-call pairing rule; the real APIs answer 400."""


class ScriptedServer:
    """Base: a queue of replies served over HTTP; subclasses speak one API's wire format."""

    url_suffix = "/v1"  # what the API's SDK expects at the end of its base URL
    prompt_cache: Callable[[], PromptCache]  # the API's caching, simulated (tests/fakes/prompt_cache.py)

    def __init__(self, replies: Iterable[ReplySource] = (), *, default: ReplySource | None = None):
        self.requests: list[dict[str, Any]] = []
        self.raw_requests: list[bytes] = []
        self.default = default
        self.url = ""
        self._replies: deque[ReplySource] = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._cache = self.prompt_cache()

    # -- lifecycle -------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the queued replies and the recorded requests (one server, many tests)."""
        with self._lock:
            self._replies.clear()
            self.requests.clear()
            self.raw_requests.clear()
        self.forget_cache()

    def add(self, *replies: ReplySource) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self):
        self.forget_cache()
        self._stopping.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{port}{self.url_suffix}"
        # A short poll interval keeps stop() (and so every test's teardown) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- hooks for subclasses --------------------------------------------------------------------

    def handle_get(self, handler: _Handler) -> None:
        handler.send_json(404, self.error_body(404, f"no route GET {handler.path}"))

    api_path = ""  # the one POST route the API serves, e.g. "/v1/chat/completions"

    def handle_post(self, handler: _Handler, body: dict[str, Any]) -> None:
        """Record the request, refuse a history with unanswered tool calls (as the real APIs do),
        then answer with the next scripted reply: an HTTP error, a stream, or one JSON body."""
        if handler.path.rstrip("/") != self.api_path:
            handler.send_json(404, self.error_body(404, f"no route POST {handler.path}"))
            return
        self.record(body)
        with self._lock:
            self.raw_requests.append(handler.raw_body)
        try:
            self.check_history(body.get("messages", []))
        except DanglingToolCalls as exc:
            handler.send_json(400, self.error_body(400, str(exc)))
            return
        reply = self.next_reply(body)
        if reply is not None and not reply.get("status"):
            reply["cached"] = self.use_cache(body)
        if reply is None:
            self.send_error_reply(handler, 500, "script exhausted")
        elif reply.get("status"):
            status = int(reply["status"])
            self.send_error_reply(handler, status, reply.get("text") or f"scripted HTTP {status}")
        elif body.get("stream"):
            self.stream(handler, body, reply)
        else:
            handler.send_json(200, self.complete(body, reply))

    def check_history(self, messages: list[dict[str, Any]]) -> None:
        """Raise DanglingToolCalls when the API would answer 400."""

    def use_cache(self, body: dict[str, Any]) -> Cached:
        """What the request's prompt reads from, and writes to, the simulated prompt cache."""
        return self._cache.use(body)

    def forget_cache(self) -> None:
        """Start with an empty prompt cache."""
        self._cache = self.prompt_cache()

    def stream(self, handler: _Handler, body: dict[str, Any], reply: Reply) -> None:
        raise NotImplementedError

    def complete(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "code": status}}

    # -- shared helpers --------------------------------------------------------------------------

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        """The next scripted reply (callables resolved), the default, or None when exhausted."""
        with self._lock:
            source = self._replies.popleft() if self._replies else self.default
        if source is None:
            return None
        return dict(source(body) if callable(source) else source)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}"

    def send_error_reply(self, handler: _Handler, status: int, message: str) -> None:
        handler.send_json(status, self.error_body(status, message), {"retry-after-ms": "10"})

    def send_events(
        self, handler: _Handler, reply: Reply, events: list[bytes], tail: list[bytes], *, first_content: int
    ) -> None:
        """Stream `events` then `tail`, honouring the reply's delay, truncate and hang keys.

        `first_content` is the index of the first event that carries content: a hanging reply
        sends up to it, so the client has something to show before the stream stalls."""
        # A stream that ends abnormally (truncated, hanging) ends with its connection, as a failing server's
        # does; a normal one is chunked on a connection kept alive, as the real APIs' are.
        handler.start_stream(keep_alive=not (reply.get("truncate") or reply.get("hang")))
        if reply.get("truncate"):
            # Keep at least the first content chunk so the client has something half-finished.
            events, tail = events[: max(first_content + 1, (len(events) + 1) // 2)], []
        delay = float(reply.get("delay", 0))
        try:
            for index, event in enumerate([*events, *tail]):
                if index and delay:
                    time.sleep(delay)
                handler.write_stream(event)
                if reply.get("hang") and index >= first_content:
                    self._wait_for_disconnect(handler.connection)
                    return
            handler.end_stream()
        except (BrokenPipeError, ConnectionResetError):
            return

    def _wait_for_disconnect(self, conn: socket.socket) -> None:
        while not self._stopping.is_set():
            readable, _, _ = select.select([conn], [], [], 0.05)
            if readable:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return

    def _handler_class(self) -> type[_Handler]:
        server = self

        class Handler(_Handler):
            scripted = server

        return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scripted: ScriptedServer
    raw_body = b""
    chunked = False  # the stream being written is chunked (its connection stays open)
    # A kept-alive stream ends with a small write (the last chunk) right after the events: with Nagle's
    # algorithm it would wait for the client's delayed ACK, 40 ms per model call.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self.scripted.handle_get(self)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.raw_body = raw
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, self.scripted.error_body(400, "request body is not JSON"))
            return
        self.scripted.handle_post(self, body)

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self, *, keep_alive: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.chunked = keep_alive
        if keep_alive:
            self.send_header("Transfer-Encoding", "chunked")
        else:  # no Content-Length: the body ends when the connection closes
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()

    def write_stream(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if self.chunked else data)
        self.wfile.flush()

    def end_stream(self) -> None:
        if self.chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


def pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def arguments_json(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value)
    return max(1, len(text) // 4)


class ScriptedOpenAI(ScriptedServer):
    """OpenAI chat completions: POST /v1/chat/completions (streaming or not), GET /v1/models."""

    def handle_get(self, handler: _Handler) -> None:
        if handler.path.rstrip("/") == "/v1/models":
            model = {"id": "scripted-model", "object": "model", "created": 0, "owned_by": "scripted"}
            handler.send_json(200, {"object": "list", "data": [model]})
        else:
            super().handle_get(handler)

    api_path = "/v1/chat/completions"
    prompt_cache = PrefixCache

    def check_history(self, messages: list[dict[str, Any]]) -> None:
        check_tool_pairing(messages)

    def stream(self, handler: _Handler, body: dict[str, Any], reply: Reply) -> None:
        chunk_id, model = self.new_id("chatcmpl-"), body.get("model", "scripted-model")

        def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
            payload = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": choices,
                **extra,
            }
            return f"data: {json.dumps(payload)}\n\n".encode()

        def delta(fields: dict[str, Any], finish: str | None = None) -> bytes:
            return chunk([{"index": 0, "delta": fields, "finish_reason": finish}])

        size = int(reply.get("chunk_chars", 20))
        events = [delta({"role": "assistant", "content": ""})]
        events += [delta({"reasoning_content": p}) for p in pieces(reply.get("thinking", ""), size)]
        events += [delta({"content": p}) for p in pieces(reply.get("text", ""), size)]
        events += [delta({"refusal": p}) for p in pieces(reply.get("refusal", ""), size)]
        for index, call in enumerate(self._tool_calls(reply)):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            events.append(delta({"tool_calls": [head]}))
            # Split arguments into a few uneven parts, like the real API.
            for part in pieces(call["arguments"], max(1, len(call["arguments"]) // 3)):
                events.append(delta({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
        tail = [delta({}, self._finish_reason(reply))]
        if (body.get("stream_options") or {}).get("include_usage"):
            tail.append(chunk([], usage=self._usage(body, reply)))
        tail.append(b"data: [DONE]\n\n")
        self.send_events(handler, reply, events, tail, first_content=1)

    def complete(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
        if reply.get("thinking"):
            message["reasoning_content"] = reply["thinking"]
        if reply.get("refusal"):
            message["refusal"] = reply["refusal"]
        calls = self._tool_calls(reply)
        if calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ]
        return {
            "id": self.new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish_reason(reply)}],
            "usage": self._usage(body, reply),
        }

    def _tool_calls(self, reply: Reply) -> list[dict[str, str]]:
        return [
            {
                "id": call.get("id") or self.new_id("call_"),
                "name": call["name"],
                "arguments": arguments_json(call.get("arguments", {})),
            }
            for call in reply.get("tool_calls", [])
        ]

    @staticmethod
    def _finish_reason(reply: Reply) -> str:
        return reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")

    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        usage = reply.get("usage") or {}
        cached: Cached = reply.get("cached") or Cached(1, 0, 0)
        produced = [reply.get("text", ""), reply.get("thinking", ""), reply.get("tool_calls", [])]
        prompt = int(usage.get("prompt_tokens", cached.prompt_tokens))
        read = int(usage.get("cached_tokens", 0 if "prompt_tokens" in usage else cached.read))
        completion = int(usage.get("completion_tokens", estimate_tokens(produced)))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": read},
        }


def check_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """Raise DanglingToolCalls like the real API: every assistant tool call needs a tool message
    (before the next user or assistant message), and every tool message needs such a call."""
    pending: set[str] = set()
    open_calls: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role in ("user", "assistant") and pending:
            break
        if role == "assistant":
            open_calls = {call.get("id", "") for call in message.get("tool_calls") or []}
            pending = set(open_calls)
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            if call_id not in open_calls:
                raise DanglingToolCalls(
                    "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
                )
            pending.discard(call_id)
        elif role == "user":
            open_calls = set()
    if pending:
        raise DanglingToolCalls(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(pending))}"
        )
