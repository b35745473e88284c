"""Heavy imports kept off the critical path: loaded in a thread, and the heap they leave frozen.

Importing the ACP and model SDKs leaves hundreds of thousands of objects (pydantic schemas and their
validators) that live as long as the process. Python's cyclic garbage collector walks all of them on
every full collection, which a session/load or a busy turn (many short-lived objects) triggers again
and again. `gc.freeze()` moves what exists now to a generation the collector no longer visits:
replaying a 1,000-message session drops from ~71 to ~40 ms of CPU. Collecting while those modules
load is wasted work too (nothing they build is garbage), so the collector pauses meanwhile. Objects
frozen by chance (the garbage of the moment) are still freed by reference counting; only cycles among
them would linger.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def loading_for_good() -> Iterator[None]:
    """Around imports of modules that stay for the life of the process: no collection while they load,
    then, if modules were indeed loaded, what exists is frozen (not on every use: frozen garbage cycles
    would never be freed)."""
    modules = len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if len(sys.modules) > modules:
            gc.freeze()
        gc.enable()


def prepare_in_background(name: str, prepare: Callable[[], object]) -> None:
    """Run `prepare` (imports, mostly) in a daemon thread named `name`; what it loads is there for good.
    An import of the same module meanwhile waits for this one."""

    def run() -> None:
        with loading_for_good():
            prepare()

    threading.Thread(target=run, name=name, daemon=True).start()
