"""Whether a process still runs, for tests that check nothing outlives what started it."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

POLL = 0.02


def process_alive(pid: int) -> bool:
    """False once the process is gone or a zombie (it may wait for a reaper that never comes)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def within(seconds: float, condition: Callable[[], object]) -> bool:
    """Whether `condition` holds within `seconds` (looked at every POLL seconds, and once more at the end)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return bool(condition())
        time.sleep(POLL)
    return True


async def eventually(seconds: float, condition: Callable[[], object]) -> bool:
    """`within` for a test on an event loop, which must keep running meanwhile."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return bool(condition())
        await asyncio.sleep(POLL)
    return True


def gone_within(pid: int, seconds: float) -> bool:
    return within(seconds, lambda: not process_alive(pid))


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
