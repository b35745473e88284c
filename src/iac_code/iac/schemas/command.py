"""Running `<tool> providers schema -json` and `<tool> version -json` the way plans run terraform.

Like iac/plans/runner.py: its own process group under the reaper, the command environment (the agent's keys
withheld, the infrastructure guard's shims first on PATH: neither command changes anything, so the guard
lets them run), nothing interactive, a timeout. The schema document of big providers is tens of MB: the read
is bounded (MAX_DOCUMENT_BYTES) and the command killed past it; stderr keeps only its head.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from pathlib import Path

from iac_code.iac.plans.runner import PLAN_ENVIRONMENT, says_not_initialized, trimmed_error
from iac_code.system.processes import contained, kill_process_group, spawn, wait_for_exit

SCHEMA_TIMEOUT = 300.0  # seconds: every provider plugin is started and asked for its schema
VERSION_TIMEOUT = 30.0
MAX_DOCUMENT_BYTES = 512 << 20
MAX_ERROR_BYTES = 64 << 10
CHUNK = 1 << 20
ENVIRONMENT = PLAN_ENVIRONMENT  # no prompts, no colours, no version check over the network


class CommandFailed(Exception):
    """The command did not give its document; the message says what it said, for the model and user."""

    def __init__(self, message: str, *, not_initialized: bool = False) -> None:
        super().__init__(message)
        self.not_initialized = not_initialized


async def schema_document(program: str, tool: str, directory: Path, environment: Mapping[str, str]) -> bytes:
    """The stdout of `<program> providers schema -json` run in `directory`."""
    argv = [program, "providers", "schema", "-json"]
    code, out, errors = await run_bounded(argv, directory, environment, SCHEMA_TIMEOUT)
    if code != 0:
        text = trimmed_error(errors.decode("utf-8", "replace")) or "no reason given"
        failed = f"{tool} providers schema failed in {directory}:\n{text}"
        raise CommandFailed(failed, not_initialized=says_not_initialized(text))
    return out


async def binary_version(program: str, tool: str, directory: Path, environment: Mapping[str, str]) -> str:
    code, out, errors = await run_bounded([program, "version", "-json"], directory, environment, VERSION_TIMEOUT)
    try:
        version = json.loads(out)["terraform_version"] if code == 0 else None
    except (ValueError, KeyError, TypeError):
        version = None
    if not isinstance(version, str) or not version:
        said = trimmed_error(errors.decode("utf-8", "replace")) or "no version in its answer"
        raise CommandFailed(f"{tool} version -json failed: {said}")
    return version


async def run_bounded(
    argv: list[str], cwd: Path, environment: Mapping[str, str], timeout: float
) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, the head of stderr); CommandFailed on a timeout or a stdout over the bound.
    A timeout, an overflow or a cancel kills the command's whole group."""
    process = await spawn(
        *contained(*argv),
        cwd=str(cwd),
        env={**environment, **ENVIRONMENT},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    what = f"{Path(argv[0]).name} {argv[1]}"
    try:
        reads = _read(process.stdout, MAX_DOCUMENT_BYTES), _read(process.stderr, MAX_ERROR_BYTES, head=True)
        async with asyncio.timeout(timeout):
            out, errors = await asyncio.gather(*reads)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            await kill_process_group(process)
        if isinstance(exc, TimeoutError):
            raise CommandFailed(f"{what} did not finish within {timeout:g} s.") from None
        if isinstance(exc, _TooLong):
            raise CommandFailed(f"{what} wrote more than {MAX_DOCUMENT_BYTES >> 20} MiB.") from None
        raise
    if not await wait_for_exit(process, 5.0):  # its output closed, yet it lingers
        await kill_process_group(process)
    return (-1 if process.returncode is None else process.returncode), out, errors


class _TooLong(Exception):
    pass


async def _read(stream: asyncio.StreamReader, limit: int, *, head: bool = False) -> bytes:
    """All of `stream`, _TooLong past `limit` bytes; with `head`, its first `limit` bytes (the rest is
    drained, so the command never blocks on a full pipe)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(CHUNK):
        if size + len(chunk) > limit:
            if not head:
                raise _TooLong
            continue
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
