"""A repository's files that are not what they claim: a FIFO or a /dev/zero symlink named `main.tf` beside
`.terraform/`, and files swapped with symlinks to /dev/zero while iac_check reads them. The agent answers
at once with a finding, terraform is never started on such a directory, and the agent's memory stays
bounded (a watcher kills it past a ceiling, so a regression fails the test instead of the machine)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, select, updates

REAL_TERRAFORM = shutil.which("terraform")
# The agent with its threads and the summary: ~150 MB. Reading /dev/zero grows by GBs a second.
RSS_CEILING_MB = 600
WATCH_KILL_MB = 1_500  # the watcher ends the agent here: the test fails, the machine does not


def logging_terraform(directory: Path, real: str) -> Path:
    """A `terraform` that logs each call ("cwd args") and answers `validate` itself: a regression shows in
    the log instead of blocking on a FIFO or reading /dev/zero; `fmt` and `version` are the real program."""
    directory.mkdir()
    script = directory / "terraform"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$PWD $*" >> "{directory}/calls.log"\n'
        'if [ "$1" = validate ]; then echo \'{"valid": true, "diagnostics": []}\'; exit 0; fi\n'
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return directory


def calls(directory: Path) -> list[str]:
    log = directory / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def check(agent: AgentProcess, model: Any, session: str, checks: list[str]) -> tuple[dict[str, Any], float]:
    """One iac_check through the model; (the finished tool call, seconds it took)."""
    model.add({"tool_calls": [{"name": "iac_check", "arguments": {"path": ".", "checks": checks}}]}, {"text": "ok"})
    started = time.monotonic()
    # terraform validate may ask before it starts provider plugins from the workspace: allowed here
    response, seen = agent.prompt(session, "check it", select("allow_always"))
    elapsed = time.monotonic() - started
    assert response["result"]["stopReason"] == "end_turn"
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done, elapsed


@pytest.fixture
def release_fifos(workspace: Path) -> Iterator[None]:
    """On a regression terraform would block opening a FIFO: open each for writing so it reads EOF and ends."""
    yield
    for path in workspace.rglob("*"):
        if path.is_fifo():
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # nobody is reading it


@pytest.mark.skipif(REAL_TERRAFORM is None, reason="terraform is not on PATH")
@pytest.mark.parametrize("hostile", ["fifo", "dev-zero"])
def test_a_fifo_or_dev_zero_main_tf_is_reported_and_terraform_never_starts_there(
    spawn, model, workspace, tmp_path, release_fifos, hostile
):
    net, ok = workspace / "net", workspace / "ok"
    for directory in (net, ok):
        (directory / ".terraform").mkdir(parents=True)
        (directory / "variables.tf").write_text('variable "name" {\n  type = string\n}\n')
    if hostile == "fifo":
        os.mkfifo(net / "main.tf")
    else:
        (net / "main.tf").symlink_to("/dev/zero")
    assert REAL_TERRAFORM is not None
    tools = logging_terraform(tmp_path / "bin", REAL_TERRAFORM)
    agent = spawn(PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    session = agent.new_session(workspace)

    done, elapsed = check(agent, model, session, ["terraform-validate", "terraform-fmt", "hcl-syntax"])

    assert elapsed < 30  # the FIFO blocked validate for its whole 180 s timeout
    raw = done["rawOutput"]
    (finding,) = [f for f in raw["findings"] if f["rule"] == "unsafe-file"]
    assert (finding["file"], finding["severity"]) == ("net/main.tf", "warning")
    assert ("FIFO" if hostile == "fifo" else "device") in finding["message"]
    assert any(s["tool"] == "terraform-validate" and "net" in s["reason"] for s in raw["skipped"])
    assert "net/main.tf" in model.requests[-1]["messages"][-1]["content"]  # the model is told
    ran_in = [line.split()[0] for line in calls(tools) if " validate " in f"{line} "]
    assert ran_in == [str(ok)]  # the healthy directory is still validated; net never is


def status_mb(pid: int, field: str) -> int:
    """A memory figure of /proc/PID/status (VmRSS, VmHWM...) in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(f"{field}:"))) // 1024


def memory_watch(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """Poll the agent's resident memory; past WATCH_KILL_MB kill it (the test then fails on its answer)."""
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], status_mb(pid, "VmRSS"))
        except FileNotFoundError:
            return
        if peak[0] > WATCH_KILL_MB:
            os.kill(pid, 9)
            return
        stop.wait(0.005)


def swap_with_dev_zero(files: list[Path], stop: threading.Event, deadline: float) -> None:
    """Turn each file into a symlink to /dev/zero and back, atomically (os.replace), until told or timed out."""
    while not stop.is_set() and time.monotonic() < deadline:
        for path in files:
            link = path.with_name(f".{path.name}.link")
            link.symlink_to("/dev/zero")
            os.replace(link, path)
            regular = path.with_name(f".{path.name}.tmp")
            regular.write_text("locals {}\n")
            os.replace(regular, path)
        time.sleep(0.001)


def test_files_swapped_with_dev_zero_symlinks_during_checks_keep_the_agent_small(spawn, model, workspace):
    files = []
    for index in range(60):
        directory = workspace / f"stack{index % 6}"
        directory.mkdir(exist_ok=True)
        files.append(directory / f"file{index}.tf")
        files[-1].write_text("locals {}\n")
    agent = spawn()
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=memory_watch, args=(agent.proc.pid, stop, peak), daemon=True)
    swapper = threading.Thread(target=swap_with_dev_zero, args=(files, stop, time.monotonic() + 120), daemon=True)
    watcher.start()
    swapper.start()
    try:
        session = agent.new_session(workspace)  # the workspace summary reads the files too
        for _ in range(4):
            check(agent, model, session, ["hcl-syntax", "terraform-fmt"])
    finally:
        stop.set()
        swapper.join(10)
        watcher.join(10)
    assert max(peak[0], status_mb(agent.proc.pid, "VmHWM")) < RSS_CEILING_MB
