"""The agent's end of the guard: one Unix socket per agent process, served by a thread, where shims ask
whether their exact argv may run.

Independent of any event loop, so that the commands of iac_check's workers (threads, processes) reach it
as the bash tool's do. Every command's environment carries a secret token (guard/shims.py); a token is
registered for as long as its command may run, with the decision that answers for it, and compared in
constant time. A request is netstrings (`LEN:BYTES,`): token, program, cwd, the environment (its
`NAME=VALUE` entries joined by NUL bytes), then the arguments; the answer is `run` or `refuse:REASON`.
Anything else, from either side, is a refusal (see guard/shim.py).
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import secrets
import socket
import socketserver
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

MAX_REQUEST = 1024 * 1024  # an argv beyond this is refused, unread
READ_TIMEOUT = 5.0  # seconds a shim has to send its request once connected
CLOSE_POLL = 0.05  # how often the serving thread looks whether it should stop: the agent's exit waits for it


@dataclass(frozen=True)
class ShimRequest:
    program: str
    cwd: str
    args: list[str]
    env: Mapping[str, str] = field(default_factory=dict)  # the exec's environment as the shim saw it

    @property
    def argv(self) -> list[str]:
        return [self.program, *self.args]


# Answers one request: None to run it, else the reason it may not (shown on the command's stderr). It runs
# on the channel's thread and may block (the bash tool's waits for the user on its event loop).
Decide = Callable[[ShimRequest], "str | None"]


class GuardChannel:
    """The socket at `path` and the tokens it answers for."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._decisions: dict[str, Decide] = {}
        self._lock = threading.Lock()
        self._server = _Server(path, self)
        os.chmod(path, 0o600)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(CLOSE_POLL,), name="iac-guard", daemon=True
        )
        self._thread.start()

    def register(self, decide: Decide) -> str:
        """A new secret token whose shims `decide` answers, until `forget(token)`."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._decisions[token] = decide
        return token

    def forget(self, token: str) -> None:
        with self._lock:
            self._decisions.pop(token, None)

    def decision_for(self, token: str) -> Decide | None:
        with self._lock:
            known = list(self._decisions.items())
        found = None
        for candidate, decide in known:  # every token compared, so the time says nothing of which was close
            if hmac.compare_digest(candidate.encode(), token.encode()):
                found = decide
        return found

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, channel: GuardChannel) -> None:
        self.channel = channel
        super().__init__(path, _Handler)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server
    request: socket.socket

    def handle(self) -> None:
        try:
            answer = self._answer()
        except Exception:  # a bug here must refuse, not leave the shim waiting or let it run
            logger.exception("the guard failed to answer a shim")
            answer = "refused: the agent's guard failed"
        reply = b"run" if answer is None else b"refuse:" + answer.encode(errors="replace")
        with contextlib.suppress(OSError):
            self.request.sendall(reply)

    def _answer(self) -> str | None:
        self.request.settimeout(READ_TIMEOUT)
        try:
            fields = parse_request(_read_all(self.request))
        except (OSError, ValueError):
            return "refused: malformed request to the agent's guard"
        if len(fields) < 4:
            return "refused: malformed request to the agent's guard"
        token, program, cwd, environment, *args = fields
        decide = self.server.channel.decision_for(token)
        if decide is None:  # a command that outlived its call, or one the agent did not start
            return "refused: unknown or expired guard token"
        return decide(ShimRequest(program, cwd, args, parse_environment(environment)))


def _read_all(connection: socket.socket) -> bytes:
    data = bytearray()
    while chunk := connection.recv(65536):
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("request too large")
    return bytes(data)


def parse_environment(text: str) -> dict[str, str]:
    """The shim's environment field: `NAME=VALUE` entries joined by NUL (which no entry can hold)."""
    entries = (entry.partition("=") for entry in text.split("\0") if entry)
    return {name: value for name, _, value in entries}


def parse_request(data: bytes) -> list[str]:
    """The netstrings `LEN:BYTES,` of a request, decoded as the file system would (surrogateescape)."""
    fields: list[str] = []
    position = 0
    while position < len(data):
        colon = data.index(b":", position)
        length = int(data[position:colon].decode("ascii"))
        end = colon + 1 + length
        if length < 0 or data[end : end + 1] != b",":
            raise ValueError("bad netstring")
        fields.append(os.fsdecode(data[colon + 1 : end]))
        position = end + 1
    return fields
