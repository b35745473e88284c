"""Warm worker processes for everything that reads untrusted files: started on first use, reused after.

Importing checkov takes seconds and cfn-lint loads hundreds of rule files; paying that on every call
would make re-checks slow, and doing it inside the agent would stall its event loop and keep hundreds
of MB in it. So each heavy checker lives in its own long-lived process (worker_server.py) that imported
its tool once and answers requests over pipes, one at a time. Our own parsers (HCL, YAML, ROS) run in a
small pool of such processes (`worker_pool`): a hostile file can then exhaust only a process that has a
memory and CPU limit (limits.py) and that is killed when its time is up, never the agent's threads.

`ask()` is the way in from async code: the blocking request runs on daemon threads of this module's own
(never the default executor, which asyncio joins at exit), and a cancelled call kills the process that
was answering it. A request that times out kills its worker too (the next call starts a fresh one).
Workers die with the agent: `shutdown_workers()` at exit (also registered with atexit), and on their own
when the agent's process disappears or after a long idle time.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import json
import logging
import os
import queue
import select
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from iac_code.config import Settings
from iac_code.iac.limits import LimitExceeded, Limits
from iac_code.system.processes import PIPE, Child, command_environment, exited_within, start
from iac_code.system.threads import DaemonPool

log = logging.getLogger(__name__)

SERVER = Path(__file__).with_name("worker_server.py")
STDERR_LINES = 20
CLOSE_GRACE = 1.0
CANCEL_POLL = 0.1  # seconds between looks at a request's cancel flag while it waits
REQUEST_THREADS = 32  # requests waiting on workers at once (each holds a daemon thread, mostly asleep)


@dataclass
class WorkerSettings:
    idle_seconds: float = Settings.worker_idle_seconds  # an idle worker exits after this (worker_server.py)


# The settings of the workers started from now on: the start-up (serve.py, cli.py) applies Settings once.
worker_settings = WorkerSettings()


def configure_workers(settings: Settings) -> None:
    worker_settings.idle_seconds = settings.worker_idle_seconds


class WorkerError(Exception):
    """The worker could not answer: it failed to start, crashed, timed out or reported an error."""


class WorkerTimeout(WorkerError, TimeoutError):
    """The worker did not answer within the request's time: a timeout to whoever set it (the checkers' engine
    reports it as the checker timing out, whichever of its clock and the worker's ran out first)."""


class Requestable(Protocol):
    def request(self, payload: dict[str, Any], timeout: float, cancel: threading.Event | None = None) -> Any: ...


class WarmWorker:
    def __init__(
        self, name: str, handler: Path, python: str, env: dict[str, str] | None = None, limits: Limits | None = None
    ) -> None:
        self.name = name
        self.handler = handler
        self.python = python
        self.env = env or {}
        self.limits = limits
        self._process: Child | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self, timeout: float) -> None:
        """Start the worker now if it is not running (a warm-up: the first request then pays nothing)."""
        with self._lock:
            try:
                self._running(time.monotonic() + timeout, None)
            except (OSError, WorkerError, LimitExceeded) as exc:
                self._kill()
                raise WorkerError(f"{self.name} worker did not start: {exc}") from None

    def request(self, payload: dict[str, Any], timeout: float, cancel: threading.Event | None = None) -> Any:
        """Send one request and wait for its result; the worker is started if needed (within `timeout`).
        Setting `cancel` kills the worker and ends the wait (WorkerError)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            try:
                process = self._running(deadline, cancel)
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(payload).encode() + b"\n")
                process.stdin.flush()
                answer = self._read_line(process, deadline, cancel)
            except (OSError, WorkerError, LimitExceeded) as exc:
                self._kill()
                if not isinstance(exc, OSError):
                    raise
                raise WorkerError(f"{self.name} worker failed: {exc}{self._stderr_tail()}") from None
            if answer.get("limit") == "memory":
                self._kill()  # it leaves by itself: not one more request for it
                if self.limits is not None:
                    raise self.limits.out_of_memory(self.name)
        if not answer.get("ok"):
            raise WorkerError(str(answer.get("error") or "the worker reported an unknown error"))
        return answer.get("result")

    def close(self) -> None:
        """Stop the worker, also in the middle of a request (which then fails): without the lock, which a
        running request holds, so that the agent's shutdown never waits for a check of several minutes."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()  # the worker leaves on EOF
            left = exited_within(process, CLOSE_GRACE)
        except OSError:
            left = False
        if not left:
            process.kill()
            process.wait()

    def _running(self, deadline: float, cancel: threading.Event | None) -> Child:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stderr.clear()
        env = command_environment()
        env.update(self.env)
        env["IAC_CODE_WORKER_IDLE_SECONDS"] = str(worker_settings.idle_seconds)  # what worker_server.py reads
        preexec = None
        if self.limits is not None:
            # Memory for the process's whole life; CPU time per request, which the worker sets itself.
            preexec = replace(self.limits, cpu_seconds=None).preexec
            env["IAC_CODE_WORKER_CPU_SECONDS"] = str(self.limits.cpu_seconds or 0)
        # In a process group of its own (as every child): a Ctrl-C on the agent's terminal is the agent's to handle.
        process = start(
            [self.python, str(SERVER), str(self.handler)],
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            cwd=tempfile.gettempdir(),  # nothing a library writes lands in the workspace
            env=env,
            preexec_fn=preexec,
        )
        self._process = process
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True).start()
        log.info("started %s worker (pid %d)", self.name, process.pid)
        ready = self._read_line(process, deadline, cancel)
        if not ready.get("ready"):
            raise WorkerError(f"{self.name} worker did not start: {ready}")
        return process

    def _read_line(self, process: Child, deadline: float, cancel: threading.Event | None) -> dict[str, Any]:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        buffer = b""
        while not buffer.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout(f"{self.name} timed out")
            if cancel is not None and cancel.is_set():
                raise WorkerError(f"{self.name}: the request was cancelled")
            readable, _, _ = select.select([fd], [], [], min(remaining, CANCEL_POLL))
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._exited(process)
            buffer += chunk
        answer = json.loads(buffer)
        if not isinstance(answer, dict):
            raise WorkerError(f"{self.name} worker sent {buffer[:200]!r}")
        return answer

    def _drain_stderr(self, process: Child) -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", errors="replace").rstrip()
            if line:
                self._stderr.append(line)

    def _exited(self, process: Child) -> Exception:
        exited_within(process, CLOSE_GRACE)  # if it closed its stdout but lingers, _kill() ends it
        tail = self._stderr_tail()
        hit = None if self.limits is None else self.limits.exceeded(self.name, process.returncode, tail)
        return hit or WorkerError(f"{self.name} worker exited (code {process.returncode}){tail}")

    def _stderr_tail(self) -> str:
        time.sleep(0.05)  # let the drain thread catch the last words of a dying worker
        lines = [line for line in self._stderr if line.strip()]
        return f": {lines[-1][:500]}" if lines else ""

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


class WorkerPool:
    """`size` interchangeable workers running the same handler; a request takes whichever is free."""

    def __init__(self, name: str, handler: Path, python: str, size: int, limits: Limits | None = None) -> None:
        self.name = name
        self.python = python
        self.workers = [WarmWorker(f"{name} worker {n}", handler, python, limits=limits) for n in range(1, size + 1)]
        self._idle: queue.SimpleQueue[WarmWorker] = queue.SimpleQueue()
        for worker in self.workers:
            self._idle.put(worker)

    def start(self, timeout: float) -> None:
        """Start every worker, side by side."""
        starting = [threading.Thread(target=_start_quietly, args=(w, timeout), daemon=True) for w in self.workers]
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join(timeout)

    def request(self, payload: dict[str, Any], timeout: float, cancel: threading.Event | None = None) -> Any:
        deadline = time.monotonic() + timeout
        worker = self._checkout(deadline, cancel)
        try:
            return worker.request(payload, max(0.0, deadline - time.monotonic()), cancel)
        finally:
            self._idle.put(worker)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()

    def _checkout(self, deadline: float, cancel: threading.Event | None) -> WarmWorker:
        while True:
            if cancel is not None and cancel.is_set():
                raise WorkerError(f"{self.name}: the request was cancelled")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerError(f"{self.name} timed out waiting for a free worker")
            try:
                return self._idle.get(timeout=min(remaining, CANCEL_POLL))
            except queue.Empty:
                continue


def _start_quietly(worker: WarmWorker, timeout: float) -> None:
    try:
        worker.start(timeout)
    except WorkerError as exc:
        log.info("%s", exc)


_requests = DaemonPool(REQUEST_THREADS, "iac-workers")


async def ask(target: Requestable, payload: dict[str, Any], timeout: float) -> Any:
    """`target.request(payload, timeout)` from async code, on daemon threads (exit never waits for them).
    Cancelling the call (a cancelled turn, the check's timeout, shutdown) kills the process answering it."""
    cancel = threading.Event()
    future = _requests.submit(lambda: target.request(payload, timeout, cancel))
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        cancel.set()
        raise


_workers: dict[str, WarmWorker | WorkerPool] = {}
_workers_lock = threading.Lock()


def warm_worker(
    name: str, handler: Path, python: str, env: dict[str, str] | None = None, limits: Limits | None = None
) -> WarmWorker:
    """The process-wide worker for `name` (one per checker, shared by every session)."""
    with _workers_lock:
        worker = _workers.get(name)
        if not isinstance(worker, WarmWorker) or worker.python != python:
            if worker is not None:
                worker.close()
            worker = _workers[name] = WarmWorker(name, handler, python, env, limits)
        return worker


def worker_pool(name: str, handler: Path, size: int, limits: Limits | None = None) -> WorkerPool:
    """The process-wide pool `name` of `size` workers under our own interpreter (shared by every session)."""
    with _workers_lock:
        pool = _workers.get(name)
        if not isinstance(pool, WorkerPool):
            pool = _workers[name] = WorkerPool(name, handler, sys.executable, size, limits)
        return pool


def shutdown_workers() -> None:
    """Stop every warm worker. Call when the agent shuts down (also runs at interpreter exit)."""
    with _workers_lock:
        entries = list(_workers.values())
        _workers.clear()
    workers = [w for entry in entries for w in (entry.workers if isinstance(entry, WorkerPool) else [entry])]
    # Side by side: each takes most of a second to leave (its interpreter unloads checkov or cfn-lint), and
    # a busy one gets a grace second before it is killed.
    closing = [threading.Thread(target=worker.close, name=f"close-{worker.name}") for worker in workers]
    for thread in closing:
        thread.start()
    for thread in closing:
        thread.join()


atexit.register(shutdown_workers)
