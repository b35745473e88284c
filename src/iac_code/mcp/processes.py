"""The stdio servers' process groups, and what kills them when the agent goes.

Kept free of the SDK so `kill_all_servers` can be imported (and registered) cheaply.
- At interpreter exit (the agent's graceful exits) every live group is killed (atexit).
- On Linux each server gets PR_SET_PDEATHSIG: the kernel SIGKILLs it when the agent dies, even by
  SIGKILL. A grandchild (`npx` starting `node`) does not inherit it; it sees its stdin close when the
  agent dies, which makes MCP servers exit. A worker that detaches from stdin can outlive a SIGKILL.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1

_live_groups: set[int] = set()
_atexit_registered = False


def track(group: int) -> None:
    global _atexit_registered
    _live_groups.add(group)
    if not _atexit_registered:
        atexit.register(kill_all_servers)
        _atexit_registered = True


def untrack(group: int) -> None:
    _live_groups.discard(group)


def kill_all_servers() -> None:
    """SIGKILL every running stdio server's process group (at exit; safe to call from a signal path)."""
    for group in list(_live_groups):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    _live_groups.clear()


def die_with_parent() -> Callable[[], None] | None:
    """A preexec hook asking Linux to SIGKILL the child when we die; None elsewhere.

    Linux ties PDEATHSIG to the thread that forked: the asyncio loop's thread, which lives as long
    as the agent does. The hook resolves prctl before the fork and only calls it in the child.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return hook
