"""A command run on the agent's own machine (LocalIO.run, the bash tool's default): `bash -c` in its own
process group under the reaper (system/processes.py), killed on timeout and on cancel, its output's head and
tail kept within a limit. `CommandRun` is what a command produced wherever it ran (here, or in the editor's
terminal: acp/client_io.py)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from iac_code.system.processes import KILL_GRACE, REAPER_GRACE, contained, kill_process_group, spawn, wait_for_exit
from iac_code.tools.common import MAX_OUTPUT_CHARS

READ_CHUNK = 64 * 1024


class HeadTailBuffer:
    """Keeps the first and last `limit // 2` bytes of a stream, so huge outputs cost bounded memory."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return head + self.tail.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n\n[... {cut:,} bytes of output cut ...]\n\n{tail}"


async def _drain(stream: asyncio.StreamReader, buffer: HeadTailBuffer) -> None:
    while chunk := await stream.read(READ_CHUNK):
        buffer.feed(chunk)


@dataclass
class CommandRun:
    """What one command produced, wherever it ran (a local process or the client's terminal)."""

    output: str  # already cut to the output limit, head and tail kept
    exit_code: int | None = None
    signal: str | None = None  # the signal that ended it: "signal 9 (SIGKILL)", or the client's "SIGKILL"
    timed_out: bool = False
    terminal_id: str | None = None  # the client's terminal that ran it, for the tool call's live output
    # What the editor failed to do around the command (a request it never answered): the call fails
    # with it, and a timed-out command is then not said to have been killed.
    problem: str | None = None


async def run_bash(
    command: str, cwd: Path, env: Mapping[str, str], timeout: float, output_limit: int = MAX_OUTPUT_CHARS
) -> CommandRun:
    """`bash -c command` as a local process group under the reaper, killed on timeout and when the
    caller is cancelled."""
    process = await spawn(
        *contained("bash", "-c", command),
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=dict(env),
    )
    assert process.stdout is not None
    output = HeadTailBuffer(output_limit)
    try:
        async with asyncio.timeout(timeout):
            await _run_to_end(process, process.stdout, output)
    except TimeoutError:
        await kill_process_group(process, REAPER_GRACE)
        return CommandRun(output.text(), timed_out=True)
    except BaseException:  # cancelled turn: nothing may outlive it
        await kill_process_group(process, REAPER_GRACE)
        raise
    code = process.returncode
    if code is not None and code < 0:
        return CommandRun(output.text(), signal=_signal_name(-code))
    return CommandRun(output.text(), exit_code=code)


async def _run_to_end(
    process: asyncio.subprocess.Process, stdout: asyncio.StreamReader, output: HeadTailBuffer
) -> None:
    """Read until the shell is done, then reap what it left behind: a background job holds the pipe."""
    drain = asyncio.ensure_future(_drain(stdout, output))
    exited = asyncio.ensure_future(wait_for_exit(process))
    try:
        await asyncio.wait({drain, exited}, return_when=asyncio.FIRST_COMPLETED)
        await exited
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(KILL_GRACE):
                await asyncio.shield(drain)
        if not drain.done():
            await kill_process_group(process)
            with contextlib.suppress(TimeoutError):  # a process that escaped the group may keep it
                async with asyncio.timeout(KILL_GRACE):
                    await asyncio.shield(drain)
    finally:
        drain.cancel()
        exited.cancel()


def _signal_name(number: int) -> str:
    """Like "signal 9 (SIGKILL)"; real-time signals (34-64) have no name in Python, only their number."""
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"
