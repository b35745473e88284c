"""The warm lock tells who holds it: the launcher compares that pid with the socket's listener (peer.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from iac_code.warm.place import lock_holder, try_lock

HOLD = (
    "import sys; from iac_code.warm.place import try_lock; print(try_lock(sys.argv[1]), flush=True); sys.stdin.read()"
)


def test_the_holder_of_the_lock_is_named_and_a_free_lock_has_none(tmp_path):
    lock = str(tmp_path / "warm.lock")
    assert lock_holder(lock) is None  # no file yet
    holder = subprocess.Popen([sys.executable, "-c", HOLD, lock], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() != b"None"
    try:
        assert lock_holder(lock) == holder.pid
        assert try_lock(lock) is None
    finally:
        holder.communicate(b"")
    assert lock_holder(lock) is None


def test_a_forked_child_does_not_hold_its_parents_lock(tmp_path):
    """The warm process's children close the lock they inherit: with a record lock that must not release it."""
    lock = str(tmp_path / "warm.lock")
    fd = try_lock(lock)
    assert fd is not None
    try:
        pid = os.fork()
        if pid == 0:
            os.close(fd)
            os._exit(0)
        os.waitpid(pid, 0)
        prober = [
            sys.executable,
            "-c",
            "import sys; from iac_code.warm.place import lock_holder; print(lock_holder(sys.argv[1]))",
        ]
        assert subprocess.run([*prober, lock], capture_output=True, text=True, check=True).stdout.strip() == str(
            os.getpid()
        )
    finally:
        os.close(fd)
