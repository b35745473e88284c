"""What must hold before a server starts serving, each failure one ConfigError line naming what to change.

The HTTP server checks all of it at start-up and refuses to start (exit 2): nobody would see a problem
found later. The stdio server is started by an editor that shows JSON-RPC errors, not stderr, so it
starts anyway and answers the affected methods with an error (see host/unavailable_store.py).
"""

from __future__ import annotations

import errno
import socket

from iac_code.config import ConfigError

MAX_PORT = 65535


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening, or a ConfigError saying why not and which flag to change."""
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(f"--port must be between 0 and {MAX_PORT}, got {port}")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        return _tcp_listener(family, host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use: stop what listens there, or choose another with --port"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; check --host and --port") from None


def _tcp_listener(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    # Named IPPROTO_TCP, not 0 as socket.create_server leaves it: accepted sockets inherit the listener's
    # protocol, and asyncio sets TCP_NODELAY only on sockets that say TCP. Without it, the second small
    # WebSocket frame of a turn waited for the client's delayed ACK (40 ms, Nagle's algorithm).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listener.bind((host, port))
        listener.listen(2048)
    except OSError:
        listener.close()
        raise
    return listener
