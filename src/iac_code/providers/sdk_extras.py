"""Model SDKs imported without the optional packages they pick up only because they are installed.

Both official SDKs try to import aiohttp when they are imported, for an optional transport
(`DefaultAioHttpClient`) this agent never uses: its clients are httpx2's (providers/clients.py). aiohttp
is in the environment only because the checkov extra needs it, and checkov runs in worker processes
(iac/workers.py). Importing it costs ~0.1 s of the openai SDK's ~0.4 s (and of the anthropic SDK's).

trio is the same: httpx2's connection pool (httpcore2) imports it, when installed, for clients running
under trio; ours run under asyncio, and trio is here only for the web tests' browser driver (selenium).
Importing it costs ~0.1 s of the first prompt (with attrs, outcome, sortedcontainers).

So while a provider module is imported, these cannot be imported by the importing thread only: the
SDK (or httpcore2) takes its own `except ImportError` branch, as on an install without them (an aiohttp
client would then raise if built). Other threads, and the same thread afterwards, import aiohttp as usual;
if it is already loaded, nothing changes. tests/unit/providers/test_sdk_extras.py checks that the SDKs
still come without it and still work.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

UNUSED_EXTRAS = frozenset({"aiohttp", "trio"})


class _HiddenFromSomeThreads:
    """A finder on sys.meta_path that makes UNUSED_EXTRAS unimportable for the threads in `threads`,
    and is invisible to the others. (Not an importlib.abc subclass: importing that costs start-up.)"""

    def __init__(self) -> None:
        self.threads: Counter[int] = Counter()  # thread id → how many `without_unused_extras` it is inside

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in UNUSED_EXTRAS and threading.get_ident() in self.threads:
            raise ModuleNotFoundError(f"No module named {fullname!r} (not used by iac-code's providers)", name=fullname)
        return None  # the other finders decide


_finder = _HiddenFromSomeThreads()
_installing = threading.Lock()


@contextmanager
def without_unused_extras() -> Iterator[None]:
    """Around the import of a model SDK: UNUSED_EXTRAS cannot be imported by this thread meanwhile."""
    with _installing:
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
    thread = threading.get_ident()
    _finder.threads[thread] += 1
    try:
        yield
    finally:
        _finder.threads[thread] -= 1
        if not _finder.threads[thread]:
            del _finder.threads[thread]
