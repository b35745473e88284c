"""Where file and command tools act: the `WorkspaceIO` protocol, and its local implementation.

A tool reads, writes and runs through one of these instead of touching the disk itself, so the same
tool works on the local disk and processes (`LocalIO`, here) or through the editor's own file system
and terminals (`ClientIO`, in acp/client_io.py, beside the rest of ACP). Both confine paths to the
workspace before anything else.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Protocol

from iac_code.tools.common import MAX_OUTPUT_CHARS
from iac_code.tools.confined_io import read_text_file, write_text_file
from iac_code.tools.file_work import run_file_work
from iac_code.tools.local_shell import CommandRun, run_bash
from iac_code.tools.workspace import Roots, confined, resolve_in_workspace

# Called with the client's terminal id as soon as the terminal exists, so the tool call can show its
# live output before the command ends.
OnTerminal = Callable[[str], Awaitable[None]]


class WorkspaceIO(Protocol):
    workspace: Roots

    async def read_text(self, path: str | Path) -> str:
        """The file's whole text. Raises ToolError (outside the workspace, missing, binary, ...)."""
        ...

    async def write_text(self, path: str | Path, text: str) -> str | None:
        """Create or overwrite the file with `text`; return what it held before (None: it did not exist,
        or could not be read as text), for the diff the user is shown. Raises ToolError."""
        ...

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
        """Run `bash -c command`; killed on timeout (`timed_out`) and when the caller is cancelled.
        The output keeps its head and tail within `output_limit` bytes."""
        ...


class LocalIO:
    """The agent's own disk and processes: what the tools have always done."""

    def __init__(self, workspace: Roots) -> None:
        self.workspace = workspace  # the session's roots (or its cwd alone): every path stays inside one

    async def read_text(self, path: str | Path) -> str:
        return await run_file_work(read_text_file, self.workspace, self._target(path))

    async def write_text(self, path: str | Path, text: str) -> str | None:
        return await run_file_work(write_text_file, self.workspace, self._target(path), text)

    def _target(self, path: str | Path) -> Path:
        """An absolute path (a tool resolved it, and the rules judged it) is opened as it is: resolving it
        again would follow a link flipped since, and confined_io refuses a link on any of its components;
        a relative one is resolved here."""
        if Path(path).is_absolute():
            return confined(self.workspace, Path(os.path.normpath(path)), str(path))
        return resolve_in_workspace(self.workspace, str(path))

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
        return await run_bash(command, directory, env, timeout, output_limit)
