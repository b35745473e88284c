"""The agent's end of the guard: one Unix socket per agent process, served by a thread, where shims ask
whether their exact argv may run.

Independent of any event loop, so that the commands of iac_check's workers (threads, processes) reach it
as the bash tool's do. Every command's environment carries a secret token (guard/shims.py); a token is
registered for as long as its command may run, with the decision that answers for it, and compared in
constant time. A request is one byte carrying the shim's stdin, stdout and stderr (SCM_RIGHTS), then
netstrings (`LEN:BYTES,`): token, program, cwd, the number of arguments, the arguments, then the command's
environment (`NAME=value`). The answer is `run` (the shim execs the real program in the command's own
namespace, without credentials), `exit:N` / `signal:N` (the guard ran it with the credentials on the shim's
stdio: guard/handover.py) or `refuse:REASON`. Anything else, from either side, is a refusal (see guard/shim.py).
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

logger = logging.getLogger(__name__)

MAX_REQUEST = 1024 * 1024  # an argv and environment beyond this are refused, unread
STDIO_COUNT = 3
READ_TIMEOUT = 5.0  # seconds a shim has to send its request once connected
CLOSE_POLL = 0.05  # how often the serving thread looks whether it should stop: the agent's exit waits for it


@dataclass(frozen=True)
class ShimRequest:
    program: str
    cwd: str
    args: list[str]
    env: Mapping[str, str] = field(default_factory=dict)  # the command's environment, as the shim saw it

    @property
    def argv(self) -> list[str]:
        return [self.program, *self.args]


# Answers one request: None to run it, else the reason it may not (shown on the command's stderr). It runs
# on the channel's thread and may block (the bash tool's waits for the user on its event loop).
Decide = Callable[[ShimRequest], "str | None"]


class Runner(Protocol):
    """Runs an allowed request itself, with what the command does not have (guard/handover.py)."""

    def warranted(self, request: ShimRequest) -> bool: ...

    def run(self, token: str, request: ShimRequest, stdio: Sequence[int], shim: socket.socket) -> bytes: ...

    def end_runs(self, token: str) -> None: ...


class GuardChannel:
    """The socket at `path` and the tokens it answers for."""

    def __init__(self, path: str, runner: Runner | None = None) -> None:
        self.path = path
        self.runner = runner
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
        if self.runner is not None:
            self.runner.end_runs(token)

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
        stdio: list[int] = []
        try:
            reply = self._answer(stdio)
        except Exception:  # a bug here must refuse, not leave the shim waiting or let it run
            logger.exception("the guard failed to answer a shim")
            reply = b"refuse:refused: the agent's guard failed"
        finally:
            for descriptor in stdio:
                os.close(descriptor)
        with contextlib.suppress(OSError):
            self.request.sendall(reply)

    def _answer(self, stdio: list[int]) -> bytes:
        self.request.settimeout(READ_TIMEOUT)
        try:
            _, received, _, _ = socket.recv_fds(self.request, 1, STDIO_COUNT, socket.MSG_CMSG_CLOEXEC)
            stdio.extend(received)
            token, request = parse_request(_read_all(self.request))
        except (OSError, ValueError):
            return _refusal("refused: malformed request to the agent's guard")
        channel = self.server.channel
        decide = channel.decision_for(token)
        if decide is None:  # a command that outlived its call, or one the agent did not start
            return _refusal("refused: unknown or expired guard token")
        refusal = decide(request)
        if refusal is not None:
            return _refusal(refusal)
        runner = channel.runner
        if runner is None or len(stdio) != STDIO_COUNT or not runner.warranted(request):
            return b"run"
        self.request.settimeout(None)
        return runner.run(token, request, stdio, self.request)


def _refusal(reason: str) -> bytes:
    return b"refuse:" + reason.encode(errors="replace")


def _read_all(connection: socket.socket) -> bytes:
    data = bytearray()
    while chunk := connection.recv(65536):
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("request too large")
    return bytes(data)


def parse_request(data: bytes) -> tuple[str, ShimRequest]:
    """The token and the request of `data`: netstrings token, program, cwd, argument count, arguments, then
    the environment's `NAME=value` entries. ValueError when it is not that."""
    fields = parse_netstrings(data)
    if len(fields) < 4 or not fields[3].isdigit():
        raise ValueError("malformed request")
    token, program, cwd, count = fields[:4]
    args, entries = fields[4 : 4 + int(count)], fields[4 + int(count) :]
    if len(args) != int(count) or any("=" not in entry for entry in entries):
        raise ValueError("malformed request")
    env = dict(entry.split("=", 1) for entry in entries)
    return token, ShimRequest(program, cwd, args, env)


def parse_netstrings(data: bytes) -> list[str]:
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
