"""The Prometheus metrics of the HTTP server (GET /metrics), every name prefixed `iac_code_`.

prometheus_client is imported by `enable()`, which the HTTP app calls when it is built; until then
`current()` is None and every recording in record.py is a no-op (stdio never enables them). The registry
is the process's own, not prometheus_client's global one, so what /metrics shows is exactly this list
plus the process's CPU, memory and file descriptors.
"""

from __future__ import annotations

from collections.abc import Callable

PREFIX = "iac_code"
# Model calls take seconds (a long answer, a minute); store operations take milliseconds.
MODEL_CALL_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160)
STORE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
TOOL_CALL_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300)


class Metrics:
    """Every metric, in the process's own registry (a plain class: stdio imports this module, never builds one)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

        registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(namespace=PREFIX, registry=registry)

        def counter(name: str, text: str, labels: tuple[str, ...]) -> Counter:
            return Counter(name, text, labels, namespace=PREFIX, registry=registry)

        def gauge(name: str, text: str) -> Gauge:
            return Gauge(name, text, namespace=PREFIX, registry=registry)

        def histogram(name: str, text: str, labels: tuple[str, ...], buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, text, labels, namespace=PREFIX, registry=registry, buckets=buckets)

        self.registry = registry
        self.http_requests = counter("http_requests", "HTTP requests answered", ("route", "method", "status"))
        self.open_connections = gauge("open_connections", "ACP connections hosted by this process")
        self.open_sessions = gauge("open_sessions", "Sessions of the connections hosted by this process")
        self.open_streams = gauge("open_streams", "SSE responses being written")
        self.open_websockets = gauge("open_websockets", "WebSockets accepted on /acp and not yet closed")
        self.turns = counter("turns", "Prompt turns ended, by stop reason", ("stop_reason",))
        self.tool_calls = counter("tool_calls", "Tool calls, by tool and outcome", ("tool", "outcome"))
        self.tool_call_seconds = histogram("tool_call_seconds", "Time a tool call ran", ("tool",), TOOL_CALL_BUCKETS)
        self.permission_decisions = counter(
            "permission_decisions", "Permission decisions, by what decided and how", ("source", "decision")
        )
        self.model_call_seconds = histogram(
            "model_call_seconds",
            "Model calls, from the request to the end of the streamed answer",
            ("provider", "model", "outcome"),
            MODEL_CALL_BUCKETS,
        )
        # direction: input (all of it), output, and the parts of the input read from / written to the prompt cache
        self.model_tokens = counter("model_tokens", "Tokens of model calls", ("provider", "model", "direction"))
        self.model_cost = counter(
            "model_cost", "What model calls cost, where the model has a price", ("provider", "model", "currency")
        )
        self.store_seconds = histogram("store_seconds", "Session store operations", ("operation",), STORE_BUCKETS)


_metrics: Metrics | None = None


def current() -> Metrics | None:
    """The metrics, once a server enabled them."""
    return _metrics


def enable() -> Metrics:
    """Build the metrics (once per process; later calls return the same)."""
    global _metrics
    if _metrics is None:
        _metrics = Metrics()
    return _metrics


def watch_connections(connections: Callable[[], int], sessions: Callable[[], int]) -> None:
    """The open connections and sessions are read when /metrics is scraped, from the server's registry."""
    metrics = enable()
    metrics.open_connections.set_function(connections)
    metrics.open_sessions.set_function(sessions)


def exposition() -> tuple[bytes, str]:
    """The body of GET /metrics and its content type (Prometheus text format)."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(enable().registry), CONTENT_TYPE_LATEST
