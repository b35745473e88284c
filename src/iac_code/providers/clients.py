"""SDK clients shared by every session of a process.

Building an openai or anthropic client costs ~40 ms (it loads a TLS context), and each one keeps its
own connection pool; a server with a hundred sessions on one endpoint should pay that once. Clients
are kept per event loop, because their connections belong to the loop that opened them.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

T = TypeVar("T")

_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, Any]] = weakref.WeakKeyDictionary()


def shared_client(key: Hashable, make: Callable[[], T]) -> T:
    """The client for `key` on the running loop, made with `make()` the first time."""
    clients = _by_loop.setdefault(asyncio.get_running_loop(), {})
    if key not in clients:
        clients[key] = make()
    return cast("T", clients[key])
