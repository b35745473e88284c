"""Stdio MCP servers, spawned by us rather than by the SDK's `stdio_client`, for three reasons:

- the server runs under system/reaper.py (as bash commands do), a supervisor that is a child subreaper
  and gets SIGTERM when the agent dies, even by SIGKILL: whatever the server starts, even in another
  session (`setsid`) or double-forked, ends with it (the SDK has no hook for that);
- its stderr is kept (the last lines) for the log when it fails, instead of being copied to ours;
- it starts in the session's cwd, in its own process group that is killed whole when it stops.

The supervisor only forks and execs the server: the server inherits the pipes, so the JSON-RPC on
its stdin and stdout and its stderr pass through untouched, and the supervisor exits as the server
did, once it has ended what the server left running. The streams handed to the SDK's `Client` carry
one JSON-RPC message per line, as the spec says.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from iac_code.mcp.config import StdioServer
from iac_code.mcp.processes import track, untrack
from iac_code.system.processes import (
    REAPER_GRACE,
    command_environment,
    contained,
    kill_process_group,
    spawn,
    wait_for_exit,
)

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one line = one message; images make them large
STDIN_CLOSE_GRACE = 0.5  # seconds a server gets to exit by itself once its stdin closes
STDERR_TAIL_LINES = 20
STDERR_LINE_CHARS = 500


class StderrTail:
    """The last lines a server wrote to stderr."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)

    def add(self, line: str) -> None:
        line = line.rstrip()
        if line:
            self.lines.append(line[:STDERR_LINE_CHARS])

    def text(self) -> str:
        return "\n".join(self.lines)


ExitCallback = Callable[[int | None], None]
# What the SDK's Client takes from a transport: messages from the server, and to it.
Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@contextlib.asynccontextmanager
async def stdio_transport(
    spec: StdioServer, cwd: Path, stderr: StderrTail, on_exit: ExitCallback
) -> AsyncIterator[Streams]:
    """Start the server; yield the SDK's (read, write) streams; stop it (its tree ended) on the way out.

    `on_exit(returncode)` is called when the server's stdout ends, i.e. when it exited (and what it
    left running was ended) or closed it. Raises OSError when the command cannot be started.
    """
    env = {**command_environment(guarded=False), **spec.env}
    check_startable(spec.command, cwd, env)
    server = (spec.command, *spec.args)
    command = contained(*server)  # under the supervisor, unless no interpreter can run it
    process = await spawn(
        *command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=MAX_MESSAGE_BYTES,
    )
    track(process.pid, supervised=command != server)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_stdout, process, to_client, on_exit)
            tasks.start_soon(_write_stdin, process, from_client, to_client)
            tasks.start_soon(_read_stderr, process, stderr)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await stop_process(process)
                tasks.cancel_scope.cancel()
    finally:
        untrack(process.pid)
        for stream in (to_client, from_server, to_server, from_client):
            stream.close()


def check_startable(command: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise FileNotFoundError or PermissionError as exec would for a command that cannot start:
    under the supervisor, a failed exec would only show as exit code 127."""
    if os.sep not in command:  # searched on the server's PATH, as execvp does
        if shutil.which(command, path=os.pathsep.join(os.get_exec_path(env))) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
        return
    path = cwd / command  # a relative path is the server's cwd's
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
    if path.is_dir() or not os.access(path, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)


async def stop_process(process: asyncio.subprocess.Process) -> None:
    """Close stdin (the spec's polite way), wait briefly, then SIGTERM the process group (the
    supervisor then ends the rest of the server's tree) and SIGKILL what is left after its sweep."""
    if process.stdin is not None:
        process.stdin.close()
    await wait_for_exit(process, STDIN_CLOSE_GRACE)
    await kill_process_group(process, REAPER_GRACE)  # also whatever the server started, even after it exited


async def _read_stdout(
    process: asyncio.subprocess.Process,
    to_client: MemoryObjectSendStream[SessionMessage | Exception],
    on_exit: ExitCallback,
) -> None:
    assert process.stdout is not None
    try:
        while line := await process.stdout.readline():
            if not line.strip():
                continue
            try:
                message: SessionMessage | Exception = SessionMessage(
                    mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                )
            except ValueError as exc:
                logger.debug("MCP server wrote a line that is not JSON-RPC: %.200r", line)
                message = exc
            await to_client.send(message)
    except (ValueError, ConnectionError) as exc:  # ValueError: a line over MAX_MESSAGE_BYTES
        logger.warning("reading an MCP server's stdout failed: %s", exc)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return  # the client side is gone: we are stopping
    # The exit code is known before the session sees the end, so a failure can name it.
    await wait_for_exit(process, STDIN_CLOSE_GRACE)
    on_exit(process.returncode)
    to_client.close()


async def _write_stdin(
    process: asyncio.subprocess.Process,
    from_client: MemoryObjectReceiveStream[SessionMessage],
    to_client: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert process.stdin is not None
    try:
        async for message in from_client:
            data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            process.stdin.write(data.encode("utf-8") + b"\n")
            await process.stdin.drain()
    except (ConnectionError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
        to_client.close()  # the server stopped reading: pending requests must not wait forever


async def _read_stderr(process: asyncio.subprocess.Process, tail: StderrTail) -> None:
    assert process.stderr is not None
    with contextlib.suppress(ValueError, ConnectionError):
        while line := await process.stderr.readline():
            tail.add(line.decode("utf-8", errors="replace"))
