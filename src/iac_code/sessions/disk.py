"""Durable file primitives for the session store: whole-line appends, atomic rewrites, fsyncs."""

from __future__ import annotations

import errno
import logging
import os
import stat
import uuid
from pathlib import Path
from typing import Any

from iac_code.safe_json import dumps_bytes

logger = logging.getLogger(__name__)


def encode_line(payload: dict[str, Any]) -> bytes:
    """One JSON line; a stray lone surrogate is written as U+FFFD rather than failing the write."""
    return dumps_bytes(payload) + b"\n"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_from(fd: int, offset: int) -> bytes:
    chunks = []
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def open_regular(path: Path, flags: int) -> int:
    """A descriptor on `path`, refused (OSError) unless it is a regular file.

    O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it changes
    nothing for a regular file. A directory fails the check (or the open) with EISDIR."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY)
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return fd
    os.close(fd)
    code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
    raise OSError(code, "Is a directory" if code == errno.EISDIR else "not a regular file", str(path))


def stat_regular(path: Path) -> os.stat_result | None:
    """`path`'s stat when it is a regular file; None when it is missing, or when it was something
    else (a directory, a FIFO), which is then renamed aside so the file can be written anew."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(info.st_mode):
        return info
    aside = path.with_name(f".{path.name}.{uuid.uuid4().hex}.not-a-file")
    logger.warning("%s is not a regular file; moved aside to %s", path, aside.name)
    os.rename(path, aside)
    return None


def read_regular(path: Path) -> bytes:
    """The whole content of the regular file `path` (see open_regular)."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        return read_from(fd, 0)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, *, durable: bool) -> None:
    """Readers see the old content or the new, never a mix, even after a crash."""
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
    if durable:
        fsync_dir(path.parent)
