"""The hand-off's wire format, on the warm socket (a Unix stream socket):

    launcher → child   {"key", "argv", "env", "cwd", "umask", "path"}   what to run, and where; "env" without
                                        the agent's secrets (credentials.SECRET_VARIABLES)
    child → launcher   {"ready": true} | {"refused": reason}   ready: it has read the secrets itself, from
                                        /proc/<launcher pid>/environ, so the launcher may erase them there
    launcher → child   one byte, with stdin, stdout and stderr attached (SCM_RIGHTS)
    child → launcher   {"pid": n}           the child now serves: the launcher never will
    launcher → child   {"signal": n} …      a SIGTERM/SIGINT/SIGHUP the launcher got
    child → launcher   {"exit": n}          the child's exit status

Each message is a 4-byte big-endian length and that many bytes of JSON (an object). Before anything is
sent or read, the child checks that its peer is the same user, and the launcher that its peer is the warm
process (peer.py).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
from typing import Any

HANDSHAKE_SECONDS = 5.0  # either side slower than this to answer before the stdio moves is not worth waiting for
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # what a launcher passes on to its child
_LENGTH = struct.Struct("!I")
LIMIT = 8 << 20  # bytes of one message: an environment and a key fit many times over
_STDIO_MARK = b"F"


class WireError(Exception):
    """The peer broke the format or went away mid-message."""


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_LENGTH.pack(len(data)) + data)


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The next message; None at a clean end of the connection (between messages)."""
    header = _read(sock, _LENGTH.size, at_start=True)
    if header is None:
        return None
    (size,) = _LENGTH.unpack(header)
    if size > LIMIT:
        raise WireError(f"a message of {size} bytes")
    body = _read(sock, size, at_start=False)
    try:
        message = json.loads(body or b"")
    except ValueError as exc:
        raise WireError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("not a JSON object")
    return message


def send_stdio(sock: socket.socket) -> None:
    """Hand this process's stdin, stdout and stderr over."""
    socket.send_fds(sock, [_STDIO_MARK], [0, 1, 2])


def receive_stdio(sock: socket.socket) -> list[int]:
    """The launcher's stdin, stdout and stderr, as new descriptors of this process."""
    data, fds, flags, _ = socket.recv_fds(sock, len(_STDIO_MARK), 3)
    if data != _STDIO_MARK or len(fds) != 3 or flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        raise WireError("expected stdin, stdout and stderr")
    return fds


def _read(sock: socket.socket, size: int, *, at_start: bool) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            if at_start and left == size:
                return None
            raise WireError("the connection ended mid-message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
