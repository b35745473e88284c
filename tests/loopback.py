"""Services a test runs on 127.0.0.1: a file served over HTTP, and a listener that tells whether anything
connected to it (an "internal" service a request must never reach)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextlib.contextmanager
def served_json(body: bytes, name: str = "jwks.json") -> Iterator[str]:
    """`body` answered to every GET, as JSON, over plain http; yields its URL (ending in `name`)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/{name}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def silent_listener() -> Iterator[socket.socket]:
    """A listening socket nobody answers on: `anything_connected` says whether a connection came."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0)
        yield server


def anything_connected(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True
