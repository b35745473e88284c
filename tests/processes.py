"""Whether a process still runs, for tests that check nothing outlives what started it."""

from __future__ import annotations

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
