"""The loop of a warm worker process: one JSON request per line on stdin, one JSON answer per line out.

Run as `python worker_server.py HANDLER_FILE` by iac_code.iac.workers. It needs only the standard library
(and what the handler imports), so it also runs under another interpreter, e.g. the one of a checkov
installed with pipx. The handler module is loaded once (that is the warm-up: checkov takes seconds to
import) and its `handle(request: dict) -> dict` is called for every request.

The worker leaves when its stdin closes, when its parent process is gone, or after a long idle time
(IAC_CODE_WORKER_IDLE_SECONDS, which the parent sets from its Settings: this script runs outside the
package and reads its two numbers from its environment).
Anything a library prints goes to stderr: stdout carries the protocol only.

Limits: the parent starts it under a memory limit (RLIMIT_DATA). A MemoryError is answered, and then the
worker leaves (what the handler held is in an unknown state); the next request starts a fresh one. Each
request gets IAC_CODE_WORKER_CPU_SECONDS of CPU time (RLIMIT_CPU raised to what it has used plus that):
a handler that spins past it gets SIGXCPU, even if the parent that would kill it is gone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import select
import sys
import threading
import time
import traceback
from typing import Any

IDLE_EXIT_SECONDS = float(os.environ.get("IAC_CODE_WORKER_IDLE_SECONDS", "1800"))
PARENT_POLL_SECONDS = 1.0
CPU_SECONDS = int(os.environ.get("IAC_CODE_WORKER_CPU_SECONDS", "0"))  # per request; 0: unbounded


def main(argv: list[str]) -> int:
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # print() in a library must not corrupt the protocol
    sys.stdout = sys.stderr
    handle = _load_handler(argv[1])
    _watch_parent(os.getppid())
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    while True:
        readable, _, _ = select.select([sys.stdin], [], [], IDLE_EXIT_SECONDS)
        if not readable:
            return 0  # idle for long: free the memory, the parent starts a new worker when needed
        line = sys.stdin.readline()
        if not line:
            return 0  # parent closed the pipe
        _allow_cpu(CPU_SECONDS)
        answer = _answer(handle, line)
        protocol.write(json.dumps(answer) + "\n")
        protocol.flush()
        if answer.get("limit"):
            return 3  # out of memory: leave rather than answer the next request from a damaged state


def _answer(handle: Any, line: str) -> dict[str, Any]:
    try:
        return {"ok": True, "result": handle(json.loads(line))}
    except MemoryError:
        return {"ok": False, "error": "MemoryError", "limit": "memory"}
    except Exception as exc:  # reported to the parent, which marks the checker skipped
        lines = traceback.format_exception_only(type(exc), exc)
        return {"ok": False, "error": "".join(lines).strip()[-2000:]}


def _allow_cpu(seconds: int) -> None:
    """This request may use `seconds` more of CPU time (RLIMIT_CPU counts the whole life of the process)."""
    if seconds <= 0:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + seconds
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _load_handler(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("iac_code_worker_handler", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load handler {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handle


def _watch_parent(parent: int) -> None:
    """Exit when the agent dies, even in the middle of a long scan (stdin EOF comes only between requests)."""

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
