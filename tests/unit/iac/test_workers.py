"""Warm workers: started once and reused, killed on timeout and restarted, their crashes reported."""

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from iac_code.config import Settings
from iac_code.iac.workers import WarmWorker, WorkerError, configure_workers

HANDLER = """
import os, time
def handle(request):
    if request.get("started"):
        open(request["started"], "w").close()
    if request.get("sleep"):
        time.sleep(request["sleep"])
    if request.get("die"):
        os._exit(3)
    if request.get("fail"):
        raise ValueError("bad template")
    print("noise a library prints")  # must not break the protocol
    return {"pid": os.getpid(), "echo": request.get("echo")}
"""


@pytest.fixture
def worker(tmp_path: Path):  # type: ignore[no-untyped-def]
    handler = tmp_path / "handler.py"
    handler.write_text(HANDLER)
    worker = WarmWorker("test", handler, sys.executable)
    yield worker
    worker.close()


def test_one_process_answers_every_request(worker: WarmWorker) -> None:
    first = worker.request({"echo": 1}, timeout=30)
    second = worker.request({"echo": 2}, timeout=30)
    assert first["pid"] == second["pid"] == worker.pid
    assert (first["echo"], second["echo"]) == (1, 2)


def test_a_handler_error_is_reported_and_the_worker_stays(worker: WarmWorker) -> None:
    pid = worker.request({}, timeout=30)["pid"]
    with pytest.raises(WorkerError, match="bad template"):
        worker.request({"fail": True}, timeout=30)
    assert worker.request({}, timeout=30)["pid"] == pid


def test_a_timeout_kills_the_worker_and_the_next_call_starts_another(worker: WarmWorker) -> None:
    pid = worker.request({}, timeout=30)["pid"]
    with pytest.raises(WorkerError, match="timed out"):
        worker.request({"sleep": 30}, timeout=0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert worker.request({}, timeout=30)["pid"] != pid


def test_a_dead_worker_is_reported_and_replaced(worker: WarmWorker) -> None:
    with pytest.raises(WorkerError, match="exited"):
        worker.request({"die": True}, timeout=30)
    assert worker.request({"echo": "back"}, timeout=30)["echo"] == "back"


def test_close_ends_the_process(worker: WarmWorker) -> None:
    pid = worker.request({}, timeout=30)["pid"]
    worker.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_close_during_a_request_stops_it_at_once(worker: WarmWorker, tmp_path: Path) -> None:
    started = tmp_path / "started"
    failures: list[Exception] = []

    def long_request() -> None:
        try:
            worker.request({"started": str(started), "sleep": 60}, timeout=120)
        except WorkerError as exc:
            failures.append(exc)

    running = threading.Thread(target=long_request)
    running.start()
    deadline = time.monotonic() + 30
    while not started.exists():  # the worker is answering the request
        assert time.monotonic() < deadline, "the worker never started the request"
        time.sleep(0.02)
    worker.close()  # returns without waiting for the request (the grace, then a kill)
    running.join(timeout=10)
    assert not running.is_alive()
    assert len(failures) == 1 and "exited" in str(failures[0])


def test_a_handler_that_cannot_load_is_reported(tmp_path: Path) -> None:
    handler = tmp_path / "broken.py"
    handler.write_text("import no_such_module_here\n")
    worker = WarmWorker("broken", handler, sys.executable)
    with pytest.raises(WorkerError, match="no_such_module_here"):
        worker.request({}, timeout=30)


def test_prewarm_starts_the_heavy_workers_in_the_background() -> None:
    from iac_code.iac.checkers.warm import CfnLintChecker, prewarm_workers
    from iac_code.iac.workers import warm_worker

    checker = CfnLintChecker()
    prewarm_workers([checker]).join(timeout=60)
    worker = warm_worker(checker.name, Path("unused"), checker.python())  # the registry's worker, already running
    assert worker.pid is not None
    os.kill(worker.pid, 0)


def test_an_idle_worker_exits_after_the_settings_idle_time(worker: WarmWorker) -> None:
    configure_workers(Settings(worker_idle_seconds=0.3))
    try:
        pid = worker.request({}, timeout=30)["pid"]
        deadline = time.monotonic() + 10
        while worker._process is not None and worker._process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert worker._process is not None and worker._process.poll() == 0, f"worker {pid} still running"
    finally:
        configure_workers(Settings())
