"""The server's sockets before any request, on the real process over real TCP: a socket that sends no whole
request head is closed after the head deadline, sockets past the cap are closed at once, and accept()
failing for want of descriptors is logged once per interval, not once per retry."""

from __future__ import annotations

import contextlib
import resource
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.processes import within

ACCEPT_LOGGED = "accepting sockets fails"
ASYNCIO_ACCEPT_LINE = "socket.accept() out of system resource"


def address(server: ServerProcess) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@contextlib.contextmanager
def silent_sockets(server: ServerProcess, count: int) -> Iterator[list[socket.socket]]:
    """`count` sockets connected to the server that send nothing."""
    opened = [socket.create_connection(address(server), timeout=10) for _ in range(count)]
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has ended the socket (EOF or reset), without waiting."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def healthy(server: ServerProcess) -> bool:
    with httpx.Client(timeout=10) as http:
        return http.get(f"{server.base}/health").status_code == 200


def test_a_socket_without_a_whole_request_head_is_closed(model):
    with http_server(model.url, env={"IAC_CODE_HTTP_HEADER_TIMEOUT": "1"}) as server:
        with silent_sockets(server, 3) as (silent, half_line, second_head):
            half_line.sendall(b"GET /health HTT")
            second_head.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert second_head.recv(4096).startswith(b"HTTP/1.1 200")  # kept alive after its answer
            second_head.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0")  # … and a second head never ends
            for sock in (silent, half_line, second_head):
                assert within(15, lambda sock=sock: closed_by_server(sock))
        assert healthy(server)


def test_sockets_past_the_cap_are_closed_at_once(model):
    env = {"IAC_CODE_HTTP_MAX_SOCKETS": "8", "IAC_CODE_HTTP_HEADER_TIMEOUT": "120"}
    with http_server(model.url, env=env) as server:
        with silent_sockets(server, 12) as sockets:
            # Which 4 the server refuses depends on the order it accepts them in, how many it does not.
            assert within(15, lambda: sum(map(closed_by_server, sockets)) >= 4)
            closed = sum(map(closed_by_server, sockets))  # a closed socket stays readable at EOF: counted again
        assert closed == 4  # the 8 within the cap stay open (their head deadline is far off)
        assert within(15, lambda: healthy(server))  # once the silent sockets are gone
        assert server.log_text().count("closing new sockets at once") == 1  # once per interval


def test_accept_errors_are_logged_once_per_interval(model):
    env = {"IAC_CODE_HTTP_HEADER_TIMEOUT": "120"}
    with http_server(model.url, env=env) as server:
        pid = server.process.pid
        _, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        in_use = len(list(Path(f"/proc/{pid}/fd").iterdir()))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use + 2, hard))
        try:
            with silent_sockets(server, 8):
                assert within(15, lambda: ACCEPT_LOGGED in server.log_text())
                # Nothing to wait on from here: asyncio retries accept() every second, so three more failures
                # at least, which used to be a line and a traceback each.
                time.sleep(3.5)
                log = server.log_text()
        finally:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (hard, hard))
        assert log.count(ACCEPT_LOGGED) == 1 and ASYNCIO_ACCEPT_LINE not in log
        assert within(15, lambda: healthy(server))
