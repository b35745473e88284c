"""Starting and stopping child processes: the one way the agent starts one (the bash tool, ripgrep, the
checkers' CLIs, probes and warm workers, the guard's probe and handed-over runs, MCP servers on stdio). A ruff
rule (TID251, pyproject.toml) keeps `subprocess` and its kin out of every other module.

Each child runs in its own session (process group), so a timeout or a cancelled turn can kill the
command together with everything it started, not just its leader, and each is given its environment
(`command_environment` for all but the guard's hand-over): none inherits the agent's. `contained` runs a
command under reaper.py, which ends what left the group (`setsid`, daemons) when the command ends or the
agent dies. `spawn` is for async code; `start` and `run` for code that blocks (threads, probes).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from iac_code.cloud_credentials import without_credentials
from iac_code.credentials import without_secrets

KILL_GRACE = 0.4  # seconds between SIGTERM and SIGKILL; well inside the one-second cancel budget
REAPER = Path(__file__).with_name("reaper.py")
REAPER_GRACE = 1.0  # the reaper's own SIGTERM-then-SIGKILL sweep must finish before we SIGKILL it
EXIT_POLL = 0.02


# Nothing may wait for a terminal that is not there.
NON_INTERACTIVE = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TF_INPUT": "0"}


# Set by the start-up (cli.py: guard/install.guard_checks_commands), the guard living in a layer above: it
# puts its shims first on a command's PATH and the way to reach it in the environment.
# Its arguments: the environment (changed in place), the paths the command must not read, the paths of the
# agent's own state it may (a plan file it writes).
_guard_environment: Callable[[dict[str, str], Sequence[str], Sequence[str]], None] | None = None
# The paths the session's Read rules deny, for the commands started in this context (`unreadable_paths`).
_unreadable: contextvars.ContextVar[Sequence[str]] = contextvars.ContextVar("unreadable", default=())


def use_guard(add_guard: Callable[[dict[str, str], Sequence[str], Sequence[str]], None]) -> None:
    global _guard_environment
    _guard_environment = add_guard


@contextlib.contextmanager
def unreadable_paths(paths: Sequence[str]) -> Iterator[None]:
    """The guarded commands started inside (in this task, and the tasks it starts) run where `paths` cannot
    be read (namespace mode): a tool that starts programs on the workspace's files (iac_plan, iac_check) says
    what the session's Read rules deny."""
    token = _unreadable.set(paths)
    try:
        yield
    finally:
        _unreadable.reset(token)


def command_environment(
    base: Mapping[str, str] | None = None, *, guarded: bool = True, kept: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a command the agent starts. `guarded` (the default: the checks' commands): the
    infrastructure guard refuses any change it would make, and in namespace mode the command cannot read the
    agent's state (but the `kept` paths) nor what `unreadable_paths` names. The bash tool guards its own
    (tools/shell.py); an MCP server is judged by its tools, not by what it runs (guarded=False)."""
    # The agent's own keys: a command has no use for them, and printing them would put them in the
    # transcript. The cloud credentials: only the guard hands them over, to a run allowed to use them
    # (guard/handover.py). Both are gone from os.environ once the settings are read; this covers library use.
    env = without_credentials(without_secrets(os.environ if base is None else base))
    env.update(NON_INTERACTIVE)
    if guarded and _guard_environment is not None:
        _guard_environment(env, _unreadable.get(), kept)
    return env


async def spawn(program: str, *args: str, env: Mapping[str, str], **kwargs: Any) -> asyncio.subprocess.Process:
    """Start `program` in a new process group, the group killed even if we are cancelled mid-start.

    A cancel that lands while asyncio is still wiring the pipes would make it kill the leader
    alone, leaving anything it already started orphaned and running.
    """
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(program, *args, env=env, start_new_session=True, **kwargs)
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await kill_process_group(await starting)
        raise


def contained(*command: str) -> tuple[str, ...]:
    """`command` run under reaper.py, so that nothing it starts outlives it (or the agent)."""
    if not sys.executable:  # an embedded interpreter: the process group is all we have
        return command
    return (sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), *command)


def contained_in_terminal(line: str) -> list[str]:
    """The arguments of `bash` that run `line` under reaper.py in a terminal the editor starts: there when the
    terminal runs on this machine (this interpreter and reaper.py are found), else `line` as it is."""
    if not sys.executable:
        return ["-c", line]
    start = 'if [ -x "$1" ] && [ -r "$2" ]; then exec "$1" -I -S "$2" 0 bash -c "$3"; fi; exec bash -c "$3"'
    return ["-c", start, "iac-code", sys.executable, str(REAPER), line]


async def wait_for_exit(process: asyncio.subprocess.Process, timeout: float | None = None) -> bool:
    """Whether the process exited within `timeout`.

    Not `Process.wait()`: on Python 3.11 it also waits for the pipes to close, which a background
    job (or a grandchild that left the group) can hold open indefinitely.
    """
    deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
    while process.returncode is None:
        if deadline is not None and asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(EXIT_POLL)
    return True


async def kill_process_group(process: asyncio.subprocess.Process, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process's group, then SIGKILL whatever is left after `grace` seconds."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    await wait_for_exit(process, grace)
    # Even if the leader is gone, members it left behind may be ignoring SIGTERM.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await wait_for_exit(process, KILL_GRACE)


async def communicate_within(process: asyncio.subprocess.Process, timeout: float) -> tuple[bytes, bytes]:
    """The process's whole stdout and stderr; on a timeout (TimeoutError) or when the caller is cancelled, its
    process group is killed first, so nothing it started outlives the wait."""
    try:
        async with asyncio.timeout(timeout):
            return await process.communicate()
    except BaseException:
        with contextlib.suppress(Exception):
            await kill_process_group(process)
        raise


# What blocking code needs of `subprocess`, so that it imports nothing of it.
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
Child: TypeAlias = subprocess.Popen[bytes]


class StartFailed(OSError):
    """The child's `preexec_fn` failed: an OSError like every other failure to start, so one `except` covers
    them all."""


@dataclass(frozen=True)
class Finished:
    code: int  # negative: the signal that ended it
    stdout: bytes
    stderr: bytes


def start(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | Path | None = None,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    preexec_fn: Callable[[], object] | None = None,
) -> Child:
    """Start `argv` in a new process group, for code that waits on threads rather than an event loop (warm
    workers, the guard's hand-over). `stdin`, `stdout`, `stderr`: a descriptor, PIPE or DEVNULL; none, ours."""
    try:
        return subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=preexec_fn,
        )
    except subprocess.SubprocessError as exc:  # what Popen raises when preexec_fn did
        raise StartFailed(str(exc)) from exc


def run(argv: Sequence[str], *, env: Mapping[str, str], timeout: float, cwd: str | Path | None = None) -> Finished:
    """Run `argv` to its end in a new process group, stdin /dev/null, stdout and stderr read whole. After
    `timeout` seconds (TimeoutError), or when the wait is interrupted, the group is ended first: unlike
    subprocess.run, which kills the leader alone and then waits for pipes its children may hold for ever."""
    with start(argv, env=env, cwd=cwd, stdin=DEVNULL, stdout=PIPE, stderr=PIPE) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(child)
            raise TimeoutError(f"{Path(argv[0]).name} took over {timeout:g} s") from None
        except BaseException:
            stop_group(child)
            raise
    return Finished(child.returncode, stdout, stderr)


def exited_within(child: Child, timeout: float) -> bool:
    """Whether the child exited (and was reaped) within `timeout` seconds."""
    try:
        child.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def stop_group(child: Child, grace: float = KILL_GRACE) -> None:
    """SIGTERM the child's group; if the child is still there after `grace` seconds, SIGKILL the group. Returns
    once the child is reaped. (Under reaper.py the child is the reaper, which ends the rest on SIGTERM.)"""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGTERM)
    if exited_within(child, grace):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
