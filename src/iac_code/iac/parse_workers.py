"""The pool of worker processes where iac_code parses the workspace's files (HCL, YAML, ROS, kubeconform's
line lookup), so that a hostile file exhausts a limited process that can be killed, never the agent.

Two workers: the in-process parses they replace ran on threads sharing one GIL, so two processes on the
two cores of a small machine make a warm check faster, not slower (bench/iac.py); each idles at ~37 MB and
starts in ~0.3 s (both side by side). They are started when a session opens on infrastructure
(`prewarm_parse_workers`, with checkov's and cfn-lint's), else by the first check.

Memory: 512 MB of heap each. The largest file a check reads (sources.MAX_FILE_BYTES, 2 MB) peaks at ~270 MB
of resident memory parsed as YAML or HCL, so twice that leaves room and still stops what no file of that
size should need. CPU: 60 s per request, the parse checkers' timeout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iac_code.iac.limits import MB, Limits
from iac_code.iac.workers import WorkerPool, ask, worker_pool

HANDLER = Path(__file__).resolve().parent / "handlers" / "parse_handler.py"
POOL_SIZE = 2
LIMITS = Limits(memory_bytes=512 * MB, cpu_seconds=60)
START_TIMEOUT = 30.0


def parse_pool() -> WorkerPool:
    return worker_pool("parse", HANDLER, POOL_SIZE, LIMITS)


async def call_in_worker(function: str, args: dict[str, Any], timeout: float) -> Any:
    """`function(**args)` (an "iac_code.module:name" that reads the files itself) in a parse worker."""
    return await ask(parse_pool(), {"call": function, "args": args}, timeout)


def call_in_worker_blocking(function: str, args: dict[str, Any], timeout: float) -> Any:
    """The same from a thread that may block (e.g. a checker's select(), run in the planning thread)."""
    return parse_pool().request({"call": function, "args": args}, timeout)


def prewarm_parse_workers() -> None:
    """Start the pool's workers now (blocks until they are ready: call from a background thread)."""
    parse_pool().start(START_TIMEOUT)
