"""SDK clients shared by the sessions of a process, lent one request at a time.

Building an openai or anthropic client costs ~40 ms, almost all of it loading the CA store into a TLS
context, so every client shares one (`tls_context`): a client then costs ~1 ms. Sessions share clients
so that a new session finds an open connection to its endpoint. But not one client for all: httpcore
checks every connection of a client's pool (is it still alive?) whenever a request starts or ends,
and with a hundred sessions streaming at once that cost ~1 ms of CPU per request, a quarter of a
prompt's. So a request borrows a client nobody else is using (the most recently returned one, whose
connection is the likeliest to be open) or makes one: each pool then holds about one connection, and
there are as many clients as requests ever ran at once. Clients are kept per event loop, because
their connections belong to the loop that opened them.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_idle_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, list[Any]]] = (
    weakref.WeakKeyDictionary()
)


@contextmanager
def lent_client(key: Hashable, make: Callable[[], T]) -> Iterator[T]:
    """A client for `key` (same endpoint and options) that no other request is using, for one request."""
    idle = _idle_by_loop.setdefault(asyncio.get_running_loop(), {}).setdefault(key, [])
    client = idle.pop() if idle else make()
    try:
        yield client
    finally:
        idle.append(client)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client verifies with: the SDKs' default one (httpx2's), built once."""
    import httpx2

    return httpx2.create_ssl_context()
