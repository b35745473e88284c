"""A private XDG_RUNTIME_DIR for one test's warm processes, and `iac-code` launches that use it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tests.e2e.acp.wire import AgentProcess

IAC_CODE = Path(sys.executable).with_name("iac-code")
_SERVED = re.compile(r"served by the warm process \(child pid (\d+)\)")


@contextlib.contextmanager
def warm_runtime() -> Iterator[WarmRuntime]:
    """A runtime in a new, short directory, as a real one (/run/user/<uid>) is: a warm socket's path must fit a
    Unix socket's address, which a test's tmp_path in a parallel run (…/popen-gw0/test_…) may not. Its warm
    processes are stopped and the directory removed at the end."""
    root = Path(tempfile.mkdtemp(prefix="iac-warm-"))
    warm = WarmRuntime(root / "run")
    try:
        yield warm
    finally:
        try:
            warm.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


class WarmRuntime:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(mode=0o700, exist_ok=True)
        self.directory = root / "iac-code"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        return {**base, "XDG_RUNTIME_DIR": str(self.root)}

    def launch(self, env: dict[str, str], *args: str, cwd: Path | None = None) -> AgentProcess:
        """`iac-code acp ARGS` as an editor starts it."""
        return AgentProcess(self.env(env), *args, program=[str(IAC_CODE)], cwd=cwd)

    def start(self, env: dict[str, str]) -> Path:
        """A warm process, started as the first launch starts it (that launch serving itself, then ending
        with stdin); its socket once it listens."""
        subprocess.run([IAC_CODE, "acp"], env=self.env(env), stdin=subprocess.DEVNULL, capture_output=True, check=True)
        return self.wait_for_socket()

    def wait_for_socket(self, timeout: float = 60) -> Path:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for path in self.sockets():
                if _listening(path):
                    return path
            time.sleep(0.05)
        raise AssertionError(f"no warm process listens in {self.directory}: {self.logs()}")

    def sockets(self) -> list[Path]:
        return sorted(self.directory.glob("warm-*.sock")) if self.directory.is_dir() else []

    def logs(self) -> str:
        return "".join(p.read_text() for p in self.directory.glob("*.log")) if self.directory.is_dir() else ""

    def stop(self) -> None:
        """SIGTERM each warm process (its pid is in its lock) and wait until it let go of the lock."""
        for lock in self.directory.glob("*.lock") if self.directory.is_dir() else []:
            text = lock.read_text().strip()
            if text and not lock_is_free(lock):
                os.kill(int(text), signal.SIGTERM)
                assert wait_for_lock(lock, timeout=30), f"the warm process {text} did not stop"


def served_by(agent: AgentProcess) -> int | None:
    """The pid of the warm child that served `agent`, once it has exited; None: it served itself."""
    found = [int(m.group(1)) for line in agent.stderr_lines if (m := _SERVED.search(line))]
    return found[0] if found else None


def child_pid(agent: AgentProcess, timeout: float = 15) -> int:
    """The warm child's pid, from the line it writes on stderr before serving."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (pid := served_by(agent)) is not None:
            return pid
        time.sleep(0.02)
    raise AssertionError(f"not served by a warm process: {''.join(agent.stderr_lines)}")


def lock_is_free(lock: Path) -> bool:
    """Nobody holds the warm lock (a POSIX record lock, place.try_lock)."""
    with open(lock, "r+b") as file:
        try:
            fcntl.lockf(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
    return True


def wait_for_lock(lock: Path, timeout: float) -> bool:
    """Whether the lock became free within `timeout` (a blocking lock in a thread: the release itself)."""
    freed = threading.Event()

    def take() -> None:
        with open(lock, "r+b") as file:
            fcntl.lockf(file, fcntl.LOCK_EX)
        freed.set()

    threading.Thread(target=take, daemon=True).start()
    return freed.wait(timeout)


def wait_until_gone(pid: int, timeout: float = 30) -> bool:
    """Whether process `pid` (not our child) ended within `timeout`: gone, or a zombie awaiting its parent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _listening(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True
