"""What monitoring costs: the import of the hooks on every path, a hook's cost per call when metrics and traces
are off (stdio), with metrics on (HTTP) and with traces on too, and one GET /metrics body. Prints medians.

Run: .venv/bin/python bench/observability.py
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repo root, not bench/ (its http.py)

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from iac_code.observability import metrics, tracing  # noqa: E402
from iac_code.observability.metrics import exposition  # noqa: E402
from iac_code.observability.record import ModelCall, permission_decided, tool_call, traced_turn  # noqa: E402

CALLS = 20_000
OWN_MODULES = (
    "iac_code.observability",
    "iac_code.observability.metrics",
    "iac_code.observability.tracing",
    "iac_code.observability.record",
)


def import_ms() -> float:
    """The self time of the hooks' own modules in a fresh interpreter (what stdio adds at start-up: the
    standard modules they use, inspect and logging, are imported by the stdio path anyway)."""
    import compileall

    import iac_code.observability

    # as installed: compiled once (this environment may set PYTHONDONTWRITEBYTECODE, which compiles every time)
    compileall.compile_dir(Path(iac_code.observability.__file__).parent, quiet=1)
    runs = []
    for _ in range(7):
        command = [sys.executable, "-X", "importtime", "-c", "import iac_code.observability.record"]
        report = subprocess.run(command, capture_output=True, text=True, check=True).stderr.splitlines()
        own = [line.split("|") for line in report if line.rstrip().endswith(OWN_MODULES)]
        runs.append(sum(int(fields[0].removeprefix("import time:")) for fields in own) / 1000)
    return statistics.median(runs)


def per_call_us(hook: Callable[[], None]) -> float:
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(CALLS):
            hook()
        rounds.append((time.perf_counter() - started) / CALLS)
    return statistics.median(rounds) * 1e6


def one_tool_call_and_decision() -> None:
    permission_decided("mode:default", allowed=True)
    with tool_call("read_file", "call-1") as observed:
        observed.finished(failed=False)


def one_model_call() -> None:
    call = ModelCall("openai", "gpt")
    call.usage(100, 10)
    call.end("completed")


def one_turn() -> None:
    async def body() -> None:
        one_model_call()
        one_tool_call_and_decision()

    asyncio.run(traced_turn("s-1", body()))


def main() -> None:
    print(f"iac_code.observability imports, self time: {import_ms():.2f} ms")
    hooks = {"decision + tool call": one_tool_call_and_decision, "model call": one_model_call}
    for state in ("off (stdio)", "metrics (HTTP)", "metrics + traces"):
        if state == "metrics (HTTP)":
            metrics.enable()
        if state == "metrics + traces":
            tracing.use_exporters([InMemorySpanExporter()], batch=True)
        for name, hook in hooks.items():
            print(f"{name:>22}, {state:<17}: {per_call_us(hook):6.2f} µs per call")
    for _ in range(200):
        one_turn()
    bodies = []
    for _ in range(50):
        started = time.perf_counter()
        body, _ = exposition()
        bodies.append(time.perf_counter() - started)
    print(f"GET /metrics body ({len(body):,} bytes): {statistics.median(bodies) * 1000:.2f} ms")
    tracing.stop_tracing()


if __name__ == "__main__":
    main()
