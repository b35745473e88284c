"""Reading a workspace file that a hostile repository controls, without letting it choose what is read.

A path can be swapped between the walk that listed it and the read (a file replaced by a symlink to
/dev/zero, a directory by a symlink elsewhere), and a name can be a FIFO that blocks forever or a device
that never ends. So a file is opened one component at a time from the workspace root, never following a
symlink (`O_NOFOLLOW` on each component, directories with `O_DIRECTORY`), without blocking (`O_NONBLOCK`:
a FIFO opens at once), and then judged on the open descriptor: it must be a regular file, and at most
`limit` bytes are ever read from it. What was judged is what is read; nothing depends on the path again.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY_FLAGS = _OPEN_FLAGS | os.O_DIRECTORY
_CHUNK = 1 << 20


class UnsafeFile(OSError):
    """The file cannot be read as a regular file of bounded size; `reason` says why, for a finding."""

    def __init__(self, rel: str, reason: str) -> None:
        super().__init__(f"{rel}: {reason}")
        self.rel = rel
        self.reason = reason


def read_beneath(root: Path, rel: str, limit: int) -> bytes:
    """The bytes of the regular file `rel` (POSIX, relative) under `root`, reached without following any
    symlink; UnsafeFile when it is a symlink, not a regular file, or over `limit` bytes; OSError when it
    is gone. `root` itself may be a symlink (the workspace as the user named it)."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise UnsafeFile(rel, "not a path inside the workspace")
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = _open_at(part, directory, _DIRECTORY_FLAGS, rel)
            os.close(directory)
            directory = inner
        fd = _open_at(parts[-1], directory, _OPEN_FLAGS, rel)
    finally:
        os.close(directory)
    try:
        return _read_regular(fd, rel, limit)
    finally:
        os.close(fd)


def file_problem(path: Path) -> str | None:
    """Why a checker's tool must not be given `path` (a FIFO, device or socket, or a symlink to one, or a
    dangling or looping symlink), or None: a regular file or a symlink to one. For the programs we hand a
    whole directory (terraform), which open its files themselves."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return "a symbolic link that leads nowhere"
        if not stat.S_ISREG(mode):
            return f"a symbolic link to {_describe(mode)}"
        return None
    return None if stat.S_ISREG(mode) else _describe(mode)


def _open_at(name: str, directory: int, flags: int, rel: str) -> int:
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        # ELOOP: the last component is a symlink; ENOTDIR: a directory on the way is not one (or is a symlink).
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeFile(rel, "a symbolic link (not followed) or not a directory on its path") from None
        raise


def _read_regular(fd: int, rel: str, limit: int) -> bytes:
    mode = os.fstat(fd)
    if not stat.S_ISREG(mode.st_mode):
        raise UnsafeFile(rel, _describe(mode.st_mode))
    if mode.st_size > limit:
        raise UnsafeFile(rel, f"larger than {limit:,} bytes ({mode.st_size:,})")
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, min(_CHUNK, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:  # it grew after the fstat
            raise UnsafeFile(rel, f"larger than {limit:,} bytes")
    return b"".join(chunks)


def _describe(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"
