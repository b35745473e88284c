"""The limits on the processes that parse untrusted files: a parse worker past its memory limit is a
`skipped` entry naming the limit and the next check works; a cancelled request kills its worker; the
checkers' programs run under their limits (terraform's fmt and validate still work) and a program that
hits one is reported as such."""

import asyncio
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from iac_code.iac import parse_workers
from iac_code.iac.cache import ResultCache
from iac_code.iac.checkers.external import run_program
from iac_code.iac.checkers.syntax import StructuredSyntaxChecker
from iac_code.iac.engine import run_checks
from iac_code.iac.limits import MB, LimitExceeded, Limits
from iac_code.iac.workers import WarmWorker, WorkerError, ask, shutdown_workers

SLEEPER = """
import time
def handle(request):
    open(request["started"], "w").close()
    time.sleep(60)
"""


@pytest.fixture
def tiny_parse_workers(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A parse pool whose workers have 100 MB of heap (they idle at ~40 MB)."""
    shutdown_workers()
    monkeypatch.setattr(parse_workers, "LIMITS", Limits(memory_bytes=100 * MB, cpu_seconds=60))
    yield
    shutdown_workers()


def check_yaml(workspace: Path) -> dict[str, object]:
    checkers = {"yaml-syntax": StructuredSyntaxChecker()}
    report = asyncio.run(run_checks(workspace, workspace, checkers, ResultCache(None)))
    return report.raw_output()


def test_a_parse_worker_past_its_memory_limit_is_skipped_and_the_next_check_works(
    tiny_parse_workers: None, tmp_path: Path
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    # ~1.5 MB of one-character items: over a million nodes, a few hundred MB once composed.
    (big / "values.yaml").write_text("apiVersion: v1\nkind: List\nitems: [" + "1," * 750_000 + "1]\n")
    raw = check_yaml(big)
    assert raw["ran"] == [] and raw["findings"] == []
    (skipped,) = raw["skipped"]  # type: ignore[misc]
    assert skipped["tool"] == "yaml-syntax"
    assert re.fullmatch(r"parse worker \d exceeded its memory limit \(100 MB\)", skipped["reason"])

    small = tmp_path / "small"
    small.mkdir()
    (small / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n")
    raw = check_yaml(small)
    assert raw["ran"] == ["yaml-syntax"] and raw["skipped"] == []
    assert [(f["rule"], f["file"]) for f in raw["findings"]] == [("yaml-syntax", "pod.yaml")]  # type: ignore[attr-defined]


def test_cancelling_a_request_kills_the_worker_answering_it(tmp_path: Path) -> None:
    handler = tmp_path / "sleeper.py"
    handler.write_text(SLEEPER)
    worker = WarmWorker("sleeper", handler, sys.executable)
    started = tmp_path / "started"

    async def cancel_when_started() -> None:
        request = asyncio.ensure_future(ask(worker, {"started": str(started)}, timeout=120))
        while not started.exists():
            await asyncio.sleep(0.02)
        pid = worker.pid
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        assert pid is not None
        deadline = time.monotonic() + 5
        while _alive(pid):
            assert time.monotonic() < deadline, "the worker still runs after its request was cancelled"
            await asyncio.sleep(0.02)

    try:
        asyncio.run(asyncio.wait_for(cancel_when_started(), 60))
    finally:
        worker.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("iac-workers") and not t.daemon]


def test_a_worker_that_cannot_start_under_its_limit_is_reported(tmp_path: Path) -> None:
    handler = tmp_path / "hungry.py"
    handler.write_text("hoard = bytearray(300 * 1024 * 1024)\ndef handle(request):\n    return None\n")
    worker = WarmWorker("hungry", handler, sys.executable, limits=Limits(memory_bytes=100 * MB))
    with pytest.raises((WorkerError, LimitExceeded), match="memory limit"):
        worker.request({}, timeout=30)


def test_a_program_past_its_memory_limit_is_reported_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("iac_code.iac.checkers.external.PROGRAM_MEMORY", 100 * MB)
    hoard = [sys.executable, "-c", "hoard = bytearray(300 * 1024 * 1024)"]
    with pytest.raises(LimitExceeded, match=r"exceeded its memory limit \(100 MB\)"):
        asyncio.run(run_program(hoard, tmp_path, timeout=30))


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH")
def test_terraform_fmt_and_validate_work_under_the_program_limits(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('variable "x" {\n  default = 1\n}\n\noutput "y" {\n  value = var.x\n}\n')
    (tmp_path / ".terraform").mkdir()
    fmt = asyncio.run(run_program(["terraform", "fmt", "-check", "-list=true", "main.tf"], tmp_path, timeout=60))
    validate = asyncio.run(run_program(["terraform", "validate", "-json", "-no-color"], tmp_path, timeout=60))
    assert (fmt.code, fmt.stdout) == (0, "")
    assert validate.code == 0 and '"valid": true' in validate.stdout


@pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH")
def test_terraform_reading_dev_zero_is_stopped_by_its_memory_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("iac_code.iac.checkers.external.PROGRAM_MEMORY", 256 * MB)  # the real 1 GB, sooner
    (tmp_path / "zero.tf").symlink_to("/dev/zero")
    with pytest.raises(LimitExceeded, match=r"terraform exceeded its memory limit \(256 MB\)"):
        asyncio.run(run_program(["terraform", "fmt", "-check", "zero.tf"], tmp_path, timeout=60))


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone, or reaped while /proc was being read
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_parse_past_the_checkers_timeout_kills_its_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutdown_workers()
    monkeypatch.setattr(StructuredSyntaxChecker, "timeout", 1.0)
    (tmp_path / "values.yaml").write_text("apiVersion: v1\nkind: List\nitems: [" + "1," * 750_000 + "1]\n")
    parse_workers.prewarm_parse_workers()
    pids = [worker.pid for worker in parse_workers.parse_pool().workers]
    try:
        raw = check_yaml(tmp_path)
        assert raw["skipped"] == [{"tool": "yaml-syntax", "reason": "timed out after 1 s"}]
        deadline = time.monotonic() + 5
        while all(pid is not None and _alive(pid) for pid in pids):
            assert time.monotonic() < deadline, "the worker parsing past the timeout was left running"
            time.sleep(0.02)
    finally:
        shutdown_workers()


def test_a_worker_request_past_its_cpu_time_is_stopped_by_the_kernel(tmp_path: Path) -> None:
    handler = tmp_path / "spinner.py"
    handler.write_text("def handle(request):\n    while True:\n        pass\n")
    worker = WarmWorker("spinner", handler, sys.executable, limits=Limits(memory_bytes=512 * MB, cpu_seconds=1))
    started = time.monotonic()
    try:
        with pytest.raises(LimitExceeded, match=r"spinner exceeded its CPU time limit \(1 s\)"):
            worker.request({}, timeout=60)  # the parent would wait a minute; the kernel stops it first
    finally:
        worker.close()
    assert time.monotonic() - started < 30


def test_a_file_nested_too_deeply_is_a_finding_and_the_other_files_are_still_checked(tmp_path: Path) -> None:
    (tmp_path / "deep.yaml").write_text("apiVersion: v1\nkind: List\nitems: " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n")
    raw = check_yaml(tmp_path)
    assert raw["ran"] == ["yaml-syntax"] and raw["skipped"] == []
    found = {(f["rule"], f["file"], f["severity"]) for f in raw["findings"]}  # type: ignore[attr-defined]
    assert found == {("too-deep", "deep.yaml", "warning"), ("yaml-syntax", "pod.yaml", "error")}
