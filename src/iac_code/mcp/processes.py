"""The stdio servers' process groups, stopped at the agent's graceful exit.

Kept free of the SDK so `kill_all_servers` can be imported (and registered) cheaply. At interpreter
exit (atexit) every live group gets SIGTERM: a supervised server's supervisor (system/reaper.py) then
ends the server's whole tree, SIGKILL included for what ignores SIGTERM, so it must not be SIGKILLed
itself. A group without a supervisor (an embedded interpreter, no `sys.executable` to run one) is
SIGKILLed. When the agent dies by SIGKILL, the kernel tells each supervisor (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal

_live_groups: dict[int, signal.Signals] = {}  # group → the signal that ends it
_atexit_registered = False


def track(group: int, *, supervised: bool) -> None:
    global _atexit_registered
    _live_groups[group] = signal.SIGTERM if supervised else signal.SIGKILL
    if not _atexit_registered:
        atexit.register(kill_all_servers)
        _atexit_registered = True


def untrack(group: int) -> None:
    _live_groups.pop(group, None)


def kill_all_servers() -> None:
    """End every running stdio server's process tree (at exit; safe to call from a signal path)."""
    for group, signum in list(_live_groups.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)
    _live_groups.clear()
