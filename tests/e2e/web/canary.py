"""A listener on 127.0.0.1 that an answer's payload points at: a request reaching it means the page loaded (or
sent) something the answer asked for."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CanaryListener:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server
        self.paths: list[str] = []

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"


@contextmanager
def canary_listener() -> Iterator[CanaryListener]:
    listener: CanaryListener

    class Record(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            listener.paths.append(self.path)
            self.send_response(204)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    listener = CanaryListener(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
