"""`ClientIO`: the editor's file system and terminals, for the clients that advertise them.

Reads go through `fs/read_text_file` (so the model sees unsaved buffers), writes through
`fs/write_text_file` (so the editor tracks and can undo them), commands through `terminal/*` (so the
user watches them run). A client that answers "method not found" is not asked again for that kind of
work by this session: it falls back to the local disk and processes. Paths are confined to the
workspace before either is used.

Terminal lifecycle: `terminal/create` (bash -c, cwd, the agent's environment without the model API
keys, `outputByteLimit`), the terminal id handed to `on_terminal` at once, `terminal/wait_for_exit`
within the tool's timeout, `terminal/kill` on timeout or cancel, `terminal/output` for the model, and
`terminal/release` always. The client keeps only the tail of a long output, so the head is caught
early by polling `terminal/output` until it is complete: the model gets head and tail, as locally,
and never more than the limit, whatever the client sends. A kill, output or release the client does
not answer within ANSWER_SECONDS is given up: the call fails saying so, and the turn goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import (
    BaseModel,
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalRequest,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
)
from pydantic import ValidationError

from iac_code.acp.schema_v1_21 import ClientCapabilities
from iac_code.credentials import SECRET_VARIABLES
from iac_code.system.processes import contained_in_terminal
from iac_code.tools.backends import LocalIO, OnTerminal, WorkspaceIO
from iac_code.tools.base import MAX_OUTPUT_CHARS, ToolError
from iac_code.tools.local_shell import CommandRun
from iac_code.tools.workspace import Roots, resolve_in_workspace, truncate_middle

log = logging.getLogger(__name__)

# Sends one JSON-RPC request to the client and returns its result; a JSON-RPC error is raised as an
# exception with an int `code` (the SDK's RequestError). The SDK connection's `send_request` is one.
ClientRequest = Callable[[str, dict[str, Any]], Awaitable[Any]]

METHOD_NOT_FOUND = -32601
CLEANUP_SECONDS = 0.5  # kill and release may not hold up a cancelled turn longer than this
# Once the command has ended or timed out, how long the client may take to answer terminal/kill,
# terminal/output and terminal/release before the call gives up on it and fails, so that a stuck
# editor cannot hold a turn. Each is the editor's own work on this machine (a signal, a buffer of at
# most outputByteLimit bytes, freeing it), answered in milliseconds; 5 s leaves a busy editor on a
# loaded machine ample room and adds little to a command's own timeout (1 to 600 s).
ANSWER_SECONDS = 5.0
HEAD_POLL_FIRST = 0.1  # seconds between terminal/output polls while the head of the output is caught
HEAD_POLL_MAX = 2.0
_DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_none": True}
_CLEANUPS: dict[str, type[KillTerminalRequest | ReleaseTerminalRequest]] = {
    "terminal/kill": KillTerminalRequest,
    "terminal/release": ReleaseTerminalRequest,
}


class _NoAnswer(ToolError):
    """The client did not answer a request within ANSWER_SECONDS."""


class _MethodNotFound(ToolError):
    """The client does not implement the method after all. Where there is no local way instead (a
    terminal/* call after terminal/create worked), the model sees it as any other tool error."""


def known_capabilities(value: Any) -> ClientCapabilities | None:
    """The client's capabilities from raw initialize params (v1.21's model: the SDK's drops some); None (use
    none of them) when unusable."""
    if value is None or isinstance(value, ClientCapabilities):
        return value
    try:
        return ClientCapabilities.model_validate(value)
    except ValidationError:
        log.warning("unusable clientCapabilities in initialize: the client's fs and terminal are not used")
        return None


def workspace_io(
    workspace: Roots, session_id: str, request: ClientRequest, capabilities: ClientCapabilities | None
) -> WorkspaceIO:
    """The backend for a session: the client's where it advertises them, else the local disk and processes."""
    io = ClientIO(workspace, session_id, request, capabilities)
    return io if io.reads or io.writes or io.terminals else io.local


@dataclass
class _Head:
    """The beginning of a terminal's output, caught before the client's byte limit drops it."""

    text: str = ""


class ClientIO:
    def __init__(
        self,
        workspace: Roots,  # the session's roots: no path the client is asked for may leave them
        session_id: str,
        request: ClientRequest,
        capabilities: ClientCapabilities | None,
        local: WorkspaceIO | None = None,
    ) -> None:
        self.workspace = workspace
        self.local = local or LocalIO(workspace)
        fs = capabilities.fs if capabilities is not None else None
        if isinstance(fs, dict):  # the SDK leaves its default, and what replaced a value it rejected, a plain dict
            fs = FileSystemCapabilities.model_validate(fs)
        # What the client is asked to do; each turns False for good at its first "method not found".
        self.reads = bool(fs and fs.read_text_file)
        self.writes = bool(fs and fs.write_text_file)
        self.terminals = bool(capabilities and capabilities.terminal)
        self._session_id = session_id
        self._request = request
        self._cleanups: set[asyncio.Task[None]] = set()

    # -- files -------------------------------------------------------------------------------

    async def read_text(self, path: str | Path) -> str:
        target = resolve_in_workspace(self.workspace, str(path))
        if self.reads:
            request = ReadTextFileRequest(session_id=self._session_id, path=str(target))
            try:
                return ReadTextFileResponse.model_validate(await self._call("fs/read_text_file", request)).content
            except _MethodNotFound:
                self.reads = False
        return await self.local.read_text(target)

    async def write_text(self, path: str | Path, text: str) -> str | None:
        target = resolve_in_workspace(self.workspace, str(path))
        if self.writes:
            previous = await self._previous_text(target)
            request = WriteTextFileRequest(session_id=self._session_id, path=str(target), content=text)
            try:
                await self._call("fs/write_text_file", request)
                return previous
            except _MethodNotFound:
                self.writes = False
        return await self.local.write_text(target, text)

    async def _previous_text(self, target: Path) -> str | None:
        """What the editor shows for a file about to be overwritten (None for a new file)."""
        try:
            return await self.read_text(target)
        except ToolError:
            return None

    # -- commands ----------------------------------------------------------------------------

    async def run(
        self,
        command: str,
        *,
        cwd: str | Path,
        env: Mapping[str, str],
        timeout: float,
        output_limit: int = MAX_OUTPUT_CHARS,
        on_terminal: OnTerminal | None = None,
    ) -> CommandRun:
        directory = resolve_in_workspace(self.workspace, str(cwd))
        if self.terminals:
            create = CreateTerminalRequest(
                session_id=self._session_id,
                # Under the agent's reaper, in the guard's namespaces (its mount plan is in `env`), when the
                # terminal runs on this machine: the guard's shims and channel work only there anyway.
                command="bash",
                args=contained_in_terminal(command),
                cwd=str(directory),
                env=[EnvVariable(name=k, value=v) for k, v in env.items() if k not in SECRET_VARIABLES],
                output_byte_limit=output_limit,
            )
            try:
                created = CreateTerminalResponse.model_validate(await self._call("terminal/create", create))
            except _MethodNotFound:
                self.terminals = False
            else:
                return await self._in_terminal(created.terminal_id, timeout, output_limit, on_terminal)
        return await self.local.run(command, cwd=directory, env=env, timeout=timeout, output_limit=output_limit)

    async def _in_terminal(
        self, terminal_id: str, timeout: float, output_limit: int, on_terminal: OnTerminal | None
    ) -> CommandRun:
        try:
            if on_terminal is not None:
                await on_terminal(terminal_id)
            run = await self._follow(terminal_id, timeout, output_limit)
        except BaseException:  # cancelled turn (or a failed request): the command must not outlive it
            await self._settle("terminal/kill", terminal_id, CLEANUP_SECONDS)
            await self._settle("terminal/release", terminal_id, CLEANUP_SECONDS)
            raise
        # An editor that has already left a request unanswered is not waited for long a second time.
        patience = CLEANUP_SECONDS if run.problem else ANSWER_SECONDS
        if not await self._settle("terminal/release", terminal_id, patience) and run.problem is None:
            run.problem = _unanswered("release the terminal", "terminal/release")
        return run

    async def _follow(self, terminal_id: str, timeout: float, output_limit: int) -> CommandRun:
        head = _Head()
        watch = asyncio.ensure_future(self._catch_head(terminal_id, output_limit // 2, head))
        try:
            exited = await self._wait_for_exit(terminal_id, timeout)
            if exited is None:
                kill = KillTerminalRequest(session_id=self._session_id, terminal_id=terminal_id)
                await self._ask("terminal/kill", kill)
        except _NoAnswer:
            problem = f"{_unanswered('stop the terminal', 'terminal/kill')} The command may still be running there."
            return _command_run(head.text, None, terminal_id, timed_out=True, problem=problem)
        finally:
            watch.cancel()
            await asyncio.wait([watch])
        try:
            final = await self._output(terminal_id)
        except _NoAnswer:
            problem = _unanswered("send the terminal's output", "terminal/output")
            return _command_run(head.text, exited, terminal_id, timed_out=exited is None, problem=problem)
        output = _head_and_tail(head.text, final, output_limit)
        return _command_run(output, exited or final.exit_status, terminal_id, timed_out=exited is None)

    async def _wait_for_exit(self, terminal_id: str, timeout: float) -> WaitForTerminalExitResponse | None:
        """How the command ended, or None when it was still running after `timeout` seconds."""
        request = WaitForTerminalExitRequest(session_id=self._session_id, terminal_id=terminal_id)
        try:
            async with asyncio.timeout(timeout):
                exited = await self._call("terminal/wait_for_exit", request)
        except TimeoutError:
            return None
        return WaitForTerminalExitResponse.model_validate(exited)

    async def _catch_head(self, terminal_id: str, half: int, head: _Head) -> None:
        delay = HEAD_POLL_FIRST
        with contextlib.suppress(ToolError):
            while True:
                output = await self._output(terminal_id)
                if output.truncated:
                    return  # too late: the client already dropped the beginning
                head.text = output.output[:half]
                if len(output.output) >= half or output.exit_status is not None:
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, HEAD_POLL_MAX)

    async def _output(self, terminal_id: str) -> TerminalOutputResponse:
        request = TerminalOutputRequest(session_id=self._session_id, terminal_id=terminal_id)
        return TerminalOutputResponse.model_validate(await self._ask("terminal/output", request))

    async def _settle(self, method: str, terminal_id: str, patience: float) -> bool:
        """Send a clean-up request that even a second cancel cannot stop; whether the client answered
        it within `patience` seconds (an error counts: it is logged). Unanswered, it stays pending."""
        request = _CLEANUPS[method](session_id=self._session_id, terminal_id=terminal_id)
        task = asyncio.ensure_future(self._quietly(method, request))
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
        try:
            async with asyncio.timeout(patience):
                await asyncio.shield(task)
        except TimeoutError:
            return False
        return True

    async def _quietly(self, method: str, request: BaseModel) -> None:
        try:
            await self._call(method, request)
        except Exception as exc:  # the command is over for us either way; the client may have gone
            log.warning("%s failed: %s", method, exc)

    # -- requests ----------------------------------------------------------------------------

    async def _ask(self, method: str, request: BaseModel) -> Any:
        """`_call` for a request the command's end waits on: given up after ANSWER_SECONDS."""
        try:
            async with asyncio.timeout(ANSWER_SECONDS):
                return await self._call(method, request)
        except TimeoutError:
            log.warning("the client did not answer %s within %g s", method, ANSWER_SECONDS)
            raise _NoAnswer(f"the editor did not answer {method} within {ANSWER_SECONDS:g} s") from None

    async def _call(self, method: str, request: BaseModel) -> Any:
        try:
            return await self._request(method, request.model_dump(**_DUMP))
        except Exception as exc:
            code = getattr(exc, "code", None)
            if code == METHOD_NOT_FOUND:
                log.info("the client does not implement %s", method)
                raise _MethodNotFound(f"the editor does not implement {method}") from None
            if isinstance(code, int):  # a JSON-RPC error: the model should see it
                data = getattr(exc, "data", None)
                raise ToolError(f"the editor refused {method}: {exc}{f' ({data})' if data else ''}") from None
            raise


def _command_run(
    output: str,
    status: WaitForTerminalExitResponse | TerminalExitStatus | None,
    terminal_id: str,
    *,
    timed_out: bool,
    problem: str | None = None,
) -> CommandRun:
    return CommandRun(
        output,
        exit_code=status.exit_code if status else None,
        signal=status.signal if status else None,
        timed_out=timed_out,
        terminal_id=terminal_id,
        problem=problem,
    )


def _unanswered(what: str, method: str) -> str:
    return f"The editor did not {what} within {ANSWER_SECONDS:g} s (no answer to {method})."


def _head_and_tail(head: str, final: TerminalOutputResponse, output_limit: int) -> str:
    """At most `output_limit` characters of the output, its head and tail kept (as locally, where the
    limit is in bytes: never more characters). The client's whole output when it kept it all, cut in
    the middle if it ignored `outputByteLimit`; else the caught head, a cut mark and the tail."""
    if not final.truncated:
        return truncate_middle(final.output, output_limit)
    tail = final.output[-(output_limit - len(head)) :]  # the head is at most half the limit
    return f"{head}\n\n[... output cut ...]\n\n{tail}"
