"""What the agent, the providers, the store and the HTTP server report: each call here feeds the metrics
(when a server enabled them) and the traces (when tracing is on), and costs a check of two globals
otherwise.

The session a span belongs to travels in a context variable set by the turn (`traced_turn`): the model
and tool calls of that turn, and the turns of its sub-agents, run in its task or in tasks it starts, so
they carry its session id without being told.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from iac_code.observability import metrics, tracing

T = TypeVar("T")

SESSION_ID = "session.id"  # OpenTelemetry's attribute name for a session
UNKNOWN_TOOL = "(unknown)"  # a tool name the model made up: not a label of its own (unbounded)
HTTP_METHODS = frozenset({"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"})


class _Turn:
    __slots__ = ("nested", "session_id", "span")

    def __init__(self, session_id: str, *, nested: bool) -> None:
        self.session_id = session_id
        self.nested = nested  # a sub-agent's turn, inside a tool call of its session's turn
        self.span: Any = None  # the turn's span, while tracing


_turn: ContextVar[_Turn | None] = ContextVar("iac_code_turn", default=None)


def _session_id() -> str:
    turn = _turn.get()
    return turn.session_id if turn is not None else ""


# -- turns ----------------------------------------------------------------------------------------


async def traced_turn(session_id: str, body: Awaitable[T], *, name: str = "turn") -> T:
    """Run one turn's `body` in its span; a turn started inside another (a sub-agent's) is nested in it and
    keeps its session id. A manual compaction is traced the same way (`name`), without being a turn."""
    outer = _turn.get()
    turn = _Turn(session_id or (outer.session_id if outer is not None else ""), nested=outer is not None)
    token = _turn.set(turn)
    try:
        tracer = tracing.tracer()
        if tracer is None:
            return await body
        name = f"subagent_{name}" if turn.nested else name
        with tracer.start_as_current_span(name, attributes={SESSION_ID: turn.session_id}) as turn.span:
            return await body
    finally:
        _turn.reset(token)


def turn_ended(stop_reason: str) -> None:
    """The turn in progress ends with `stop_reason` (a sub-agent's turn is not a turn of its own)."""
    turn = _turn.get()
    if turn is not None and turn.span is not None:
        turn.span.set_attribute("iac_code.stop_reason", stop_reason)
    if (recorded := metrics.current()) is not None and (turn is None or not turn.nested):
        recorded.turns.labels(stop_reason).inc()


# -- tool calls and permissions -------------------------------------------------------------------


class ToolCallRecord:
    """How a running tool call ended: "cancelled" unless it says otherwise."""

    def __init__(self) -> None:
        self.outcome = "cancelled"

    def finished(self, *, failed: bool) -> None:
        self.outcome = "failed" if failed else "completed"


@contextmanager
def tool_call(name: str, call_id: str) -> Iterator[ToolCallRecord]:
    """One tool call running: its span, its duration and its outcome."""
    record = ToolCallRecord()
    started = time.perf_counter()
    tracer = tracing.tracer()
    try:
        if tracer is None:
            yield record
            return
        attributes = {"gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id, SESSION_ID: _session_id()}
        with tracer.start_as_current_span(f"tool_call {name}", attributes=attributes) as span:
            try:
                yield record
            finally:
                span.set_attribute("iac_code.outcome", record.outcome)
    finally:
        if (recorded := metrics.current()) is not None:
            recorded.tool_calls.labels(name, record.outcome).inc()
            recorded.tool_call_seconds.labels(name).observe(time.perf_counter() - started)


def tool_call_not_run(name: str, outcome: str) -> None:
    """A call that never ran: "refused" (by the policy or the user) or "unknown_tool"."""
    if (recorded := metrics.current()) is not None:
        recorded.tool_calls.labels(UNKNOWN_TOOL if outcome == "unknown_tool" else name, outcome).inc()


def permission_decided(source: str, *, allowed: bool) -> None:
    """A call was allowed or denied; `source` says what decided ("mode:<id>", "remembered", "rule:…",
    "user"…), counted by its kind only (a rule's file and entry would be a label per rule)."""
    if (recorded := metrics.current()) is not None:
        kind = source.partition(":")[0] or "unspecified"
        recorded.permission_decisions.labels(kind, "allowed" if allowed else "denied").inc()


# -- model calls ----------------------------------------------------------------------------------


class ModelCall:
    """One model call from its request to the end of its stream: `usage()` as the provider reports it,
    `end()` once. Its span is not made current: nothing of ours runs inside it, and the stream it wraps
    is a generator that may be closed from another context."""

    def __init__(self, provider: str, model: str) -> None:
        self._labels = (provider, model)
        self._started = time.perf_counter()
        self._tokens = (0, 0, 0, 0)
        tracer = tracing.tracer()
        attributes = {"gen_ai.system": provider, "gen_ai.request.model": model, SESSION_ID: _session_id()}
        self._span = tracer.start_span("model_call", attributes=attributes) if tracer is not None else None

    def usage(self, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> None:
        """`input_tokens` counts all of the input; `cache_read` and `cache_write` are parts of it."""
        self._tokens = (input_tokens, output_tokens, cache_read, cache_write)

    def end(self, outcome: str) -> None:
        input_tokens, output_tokens, cache_read, cache_write = self._tokens
        if self._span is not None:
            self._span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
            self._span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
            self._span.set_attribute("iac_code.outcome", outcome)
            self._span.end()
        if (recorded := metrics.current()) is not None:
            recorded.model_call_seconds.labels(*self._labels, outcome).observe(time.perf_counter() - self._started)
            recorded.model_tokens.labels(*self._labels, "input").inc(input_tokens)
            recorded.model_tokens.labels(*self._labels, "output").inc(output_tokens)
            recorded.model_tokens.labels(*self._labels, "cache_read").inc(cache_read)
            recorded.model_tokens.labels(*self._labels, "cache_write").inc(cache_write)


def model_spent(provider: str, model: str, amount: float, currency: str) -> None:
    """What one model call cost (called only where the model has a price)."""
    if (recorded := metrics.current()) is not None:
        recorded.model_cost.labels(provider, model, currency).inc(amount)


# -- the store and the HTTP server ----------------------------------------------------------------


def timed_store(store: T) -> T:
    """`store` with the time of each of its coroutine methods recorded (`store_seconds`, by operation)."""
    return cast(T, _TimedStore(store))


class _TimedStore:
    """Times whatever coroutine method the store has, today's and tomorrow's, without listing them."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute
        return _timed(name, attribute)


def _timed(operation: str, method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    @functools.wraps(method)
    async def timed(*args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        try:
            return await method(*args, **kwargs)
        finally:
            if (recorded := metrics.current()) is not None:
                recorded.store_seconds.labels(operation).observe(time.perf_counter() - started)

    return timed


def http_request(route: str, method: str, status: int) -> None:
    if (recorded := metrics.current()) is not None:
        recorded.http_requests.labels(route, method if method in HTTP_METHODS else "other", str(status)).inc()


def stream_opened() -> None:
    if (recorded := metrics.current()) is not None:
        recorded.open_streams.inc()


def stream_closed() -> None:
    if (recorded := metrics.current()) is not None:
        recorded.open_streams.dec()


def websocket_opened() -> None:
    if (recorded := metrics.current()) is not None:
        recorded.open_websockets.inc()


def websocket_closed() -> None:
    if (recorded := metrics.current()) is not None:
        recorded.open_websockets.dec()
