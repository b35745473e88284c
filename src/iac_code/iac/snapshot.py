"""A private copy of the files a program is about to be given, so that it reads what we judged.

A path handed to a program (terraform fmt, checkov, cfn-lint) is opened by that program later: the
repository can swap the file for a symlink to /dev/zero or a FIFO in between. So the files are read
here, with `read_beneath` (no symlink followed, size cap on the descriptor), and written at the same
relative paths under a fresh directory only this user can enter; the program is given those copies.
A file that cannot be read safely any more is not copied (the program is not given it).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from iac_code.iac import sources as sources_module
from iac_code.iac.safe_read import read_beneath
from iac_code.iac.sources import SourceFile

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024  # what one program run may be given in all


class SnapshotTooLarge(RuntimeError):
    """The files exceed MAX_SNAPSHOT_BYTES: the run fails (and is remembered) rather than fill the disk."""


@asynccontextmanager
async def snapshot(files: Iterable[SourceFile]) -> AsyncIterator[Path]:
    """A temporary directory holding a copy of each of `files` at its workspace-relative path; removed
    when the block ends."""
    root = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="iac-check-"))
    try:
        await asyncio.to_thread(_copy, list(files), root)
        yield root
    finally:
        await asyncio.to_thread(shutil.rmtree, root, ignore_errors=True)


def _copy(files: list[SourceFile], root: Path) -> None:
    total = 0
    for source in files:
        try:
            data = read_beneath(source.root, source.rel, sources_module.MAX_FILE_BYTES)
        except OSError:
            continue  # swapped or gone since it was listed
        total += len(data)
        if total > MAX_SNAPSHOT_BYTES:
            raise SnapshotTooLarge(f"the files to check exceed {MAX_SNAPSHOT_BYTES // (1024 * 1024)} MB")
        target = root / source.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
