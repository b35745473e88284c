"""Running the checkers' command-line tools (terraform/tofu, tflint, kubeconform) found on PATH.

Each runs under limits (limits.py): PROGRAM_MEMORY of RLIMIT_DATA, because these are Go programs and the
Go runtime reserves more address space at start than any useful RLIMIT_AS allows (terraform fails to
start under 1 GB of it, but runs `fmt` and `validate` under 128 MB of heap); and RLIMIT_CPU of the run's
timeout, so a tool left behind by a killed agent still ends. The limits are per process: a provider
plugin that terraform starts gets its own.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from iac_code.iac.checker import CheckerUnavailable
from iac_code.iac.limits import MB, Limits
from iac_code.system.processes import command_environment, communicate_within, contained, run, spawn

# No update check, no prompt, output meant for a program.
TOOL_ENV = {"CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "NO_COLOR": "1"}
VERSION_TIMEOUT = 20.0
PARALLEL_RUNS = 2  # the machines this runs on may have two cores; directories are checked two at a time
# terraform's fmt and validate take ~60 MB here; a tool past 1 GB of heap is reading something it must not
# (a 1 MB random .tf, /dev/zero behind a name) rather than checking code.
PROGRAM_MEMORY = 1024 * MB


@dataclass(frozen=True)
class ProgramRun:
    code: int
    stdout: str
    stderr: str


def find_program(*names: str) -> str:
    """The first of `names` found on PATH (absolute), or CheckerUnavailable naming them."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise CheckerUnavailable(f"{' / '.join(names)} not found on PATH")


def program_version(program: str, *args: str) -> str:
    """The first line `program args` prints (memoised per binary and its modification time)."""
    try:
        stamp = os.stat(program).st_mtime_ns
    except OSError:
        raise CheckerUnavailable(f"{program} is not accessible") from None
    return _version(program, stamp, args)


@cache
def _version(program: str, stamp: int, args: tuple[str, ...]) -> str:
    env = command_environment()
    env.update(TOOL_ENV)
    try:
        done = run([program, *args], env=env, timeout=VERSION_TIMEOUT)
    except OSError as exc:  # TimeoutError among them
        raise CheckerUnavailable(f"{program} does not run: {exc}") from None
    lines = (done.stdout or done.stderr).decode(errors="replace").strip().splitlines()
    if done.code != 0 or not lines:
        raise CheckerUnavailable(f"{program} does not run (exit code {done.code})")
    return lines[0].strip()


async def run_program(argv: list[str], cwd: Path, timeout: float) -> ProgramRun:
    """Run a checker's tool to the end under its limits, killed with its process group on timeout or
    cancellation; LimitExceeded when a limit stopped it."""
    env = command_environment()
    env.update(TOOL_ENV)
    limits = Limits(memory_bytes=PROGRAM_MEMORY, cpu_seconds=max(1, math.ceil(timeout)))
    process = await spawn(
        *contained(*argv),  # under the reaper: in the guard's namespace (the agent's state, denied paths hidden)
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=limits.preexec,
    )
    try:
        stdout, stderr = await communicate_within(process, timeout)
    except TimeoutError:
        raise TimeoutError(f"{Path(argv[0]).name} took over {timeout:.0f} s") from None
    run = ProgramRun(process.returncode or 0, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    hit = limits.exceeded(Path(argv[0]).name, process.returncode, run.stderr) if run.code else None
    if hit is not None:
        raise hit
    return run


class ProgramChecker:
    """Base of the checkers whose tool is a program on PATH: the first of `programs` found is used."""

    programs: tuple[str, ...] = ()
    version_args: tuple[str, ...] = ("--version",)

    def program(self) -> str:
        return find_program(*self.programs)

    def version(self) -> str:
        return program_version(self.program(), *self.version_args)


def rel_join(directory: str, name: str) -> str:
    """A file a tool reported relative to `directory` (workspace-relative), as a workspace-relative path."""
    joined = os.path.normpath(os.path.join(directory, name))
    return joined if joined != "." else directory
