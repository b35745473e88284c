"""Warm worker processes for the heavy checkers (checkov, cfn-lint): started on first use, reused after.

Importing checkov takes seconds and cfn-lint loads hundreds of rule files; paying that on every call
would make re-checks slow, and doing it inside the agent would stall its event loop and keep hundreds
of MB in it. So each heavy checker lives in its own long-lived process (worker_server.py) that imported
its tool once and answers requests over pipes, one at a time. Calls are blocking and thread-safe, meant
for `asyncio.to_thread`, so a worker does not belong to any event loop.

A request that times out kills its worker (the next call starts a fresh one). Workers die with the agent:
`shutdown_workers()` at exit (also registered with atexit), and on their own when the agent's process
disappears or after a long idle time.
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import select
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from iac_code.tools.shell import command_environment

log = logging.getLogger(__name__)

SERVER = Path(__file__).with_name("worker_server.py")
STDERR_LINES = 20
CLOSE_GRACE = 1.0


class WorkerError(Exception):
    """The worker could not answer: it failed to start, crashed, timed out or reported an error."""


class WarmWorker:
    def __init__(self, name: str, handler: Path, python: str, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.handler = handler
        self.python = python
        self.env = env or {}
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def request(self, payload: dict[str, Any], timeout: float) -> Any:
        """Send one request and wait for its result; the worker is started if needed (within `timeout`)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            try:
                process = self._running(deadline)
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(payload).encode() + b"\n")
                process.stdin.flush()
                answer = self._read_line(process, deadline)
            except (OSError, WorkerError) as exc:
                self._kill()
                if isinstance(exc, WorkerError):
                    raise
                raise WorkerError(f"{self.name} worker failed: {exc}{self._stderr_tail()}") from None
        if not answer.get("ok"):
            raise WorkerError(str(answer.get("error") or "the worker reported an unknown error"))
        return answer.get("result")

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()  # the worker leaves on EOF
            process.wait(CLOSE_GRACE)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def _running(self, deadline: float) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stderr.clear()
        env = command_environment()
        env.update(self.env)
        process = subprocess.Popen(
            [self.python, str(SERVER), str(self.handler)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tempfile.gettempdir(),  # nothing a library writes lands in the workspace
            env=env,
            start_new_session=True,  # a Ctrl-C on the agent's terminal is the agent's to handle
        )
        self._process = process
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True).start()
        log.info("started %s worker (pid %d)", self.name, process.pid)
        ready = self._read_line(process, deadline)
        if not ready.get("ready"):
            raise WorkerError(f"{self.name} worker did not start: {ready}")
        return process

    def _read_line(self, process: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        buffer = b""
        while not buffer.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerError(f"{self.name} timed out")
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                process.wait(CLOSE_GRACE)
                raise WorkerError(f"{self.name} worker exited (code {process.returncode}){self._stderr_tail()}")
            buffer += chunk
        answer = json.loads(buffer)
        if not isinstance(answer, dict):
            raise WorkerError(f"{self.name} worker sent {buffer[:200]!r}")
        return answer

    def _drain_stderr(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", errors="replace").rstrip()
            if line:
                self._stderr.append(line)

    def _stderr_tail(self) -> str:
        time.sleep(0.05)  # let the drain thread catch the last words of a dying worker
        lines = [line for line in self._stderr if line.strip()]
        return f": {lines[-1][:500]}" if lines else ""

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


_workers: dict[str, WarmWorker] = {}
_workers_lock = threading.Lock()


def warm_worker(name: str, handler: Path, python: str, env: dict[str, str] | None = None) -> WarmWorker:
    """The process-wide worker for `name` (one per checker, shared by every session)."""
    with _workers_lock:
        worker = _workers.get(name)
        if worker is None or worker.python != python:
            if worker is not None:
                worker.close()
            worker = _workers[name] = WarmWorker(name, handler, python, env)
        return worker


def shutdown_workers() -> None:
    """Stop every warm worker. Call when the agent shuts down (also runs at interpreter exit)."""
    with _workers_lock:
        workers = list(_workers.values())
        _workers.clear()
    for worker in workers:
        worker.close()


atexit.register(shutdown_workers)
