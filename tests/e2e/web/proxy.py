"""A TCP proxy in front of the server that a test can cut: every connection through it is dropped at once, as a
flaky network or a restarting load balancer would, while the server itself stays up. It keeps the head of each
request it forwards, so that a test can see what the browser sent when it came back (Last-Event-ID)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


class CuttingProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.request_heads: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        """Drops every connection open now; new ones are served as before."""
        with self._lock:
            doomed, self._open = self._open, set()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self._lock:
                self._open |= {client, upstream}
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, requests: bool) -> None:
        try:
            while data := source.recv(65536):
                if requests and data[:4] in (b"GET ", b"POST", b"DELE"):
                    self.request_heads.append(data.split(b"\r\n\r\n", 1)[0].decode("latin-1"))
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def cutting_proxy(upstream_port: int) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(upstream_port)
    try:
        yield proxy
    finally:
        proxy.close()
