"""Whether a process still runs, for tests that check nothing outlives what started it."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_alive(pid: int) -> bool:
    """False once the process is gone or a zombie (it may wait for a reaper that never comes)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_for_text(path: Path, seconds: float = 10) -> str:
    """The file's stripped text once it has some."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text().strip()):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


MARK = "IAC_TEST_MARK"


def marked_processes(marker: str) -> list[int]:
    """The live processes whose environment carries MARK=marker, by their pids as this test sees them. A
    command in a PID namespace of its own cannot tell its pid as seen from outside (`$$` and `$!` are pids
    inside it): it starts what a test must find with the mark in its environment instead."""
    needle = f"{MARK}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environment = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if needle in environment.split(b"\0") and process_alive(int(name)):
            found.append(int(name))
    return found
