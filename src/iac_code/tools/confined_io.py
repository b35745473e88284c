"""Reading and writing workspace files so that the open itself stays inside the workspace.

`resolve_in_workspace` checks a path; between that check and an `open()`, another process can swap
a directory on the path for a symlink to the outside (time of check to time of use). So the path
checked is opened again here from a descriptor of the workspace root, one component at a time, each
with O_NOFOLLOW: a component that has become a symlink fails the open instead of being followed.

Only regular files with a single link are read or written. A FIFO blocks the reader until a writer
comes (forever), a device or socket has side effects, and a hard link may be another name for a
file outside the workspace, with no way to tell where its other names are. Writes go to a temporary
file in the same directory, are fsync'd and renamed over the target, so a crash leaves the old
content or the new one, never a part; an existing file keeps its permission bits.

`read_text_file` and `write_text_file` are the local disk's reads and writes of text (backends.LocalIO's).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

from iac_code.tools.common import ToolError
from iac_code.tools.workspace import Roots, root_of

BINARY_SNIFF_BYTES = 8192
MAX_TEXT_FILE_BYTES = 64 * 1024 * 1024  # beyond this, loading the file whole is not worth it

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO that appeared since the check must not wait for a writer.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_text_file(workspace: Roots, path: Path) -> str:
    """The whole file as UTF-8 text, refusing directories, binary files and what read_file_bytes refuses."""
    try:
        data = read_file_bytes(workspace, path, MAX_TEXT_FILE_BYTES)
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise ToolError(f"{path} is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text (binary file?)") from None


def write_text_file(workspace: Roots, path: Path, content: str) -> str | None:
    """Write `content` atomically; return what the file held before (None if it did not exist)."""
    try:
        old = replace_file(workspace, path, content.encode())
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror}") from None
    return None if old is None else old.decode("utf-8", errors="replace")


def read_file_bytes(workspace: Roots, path: Path, max_bytes: int) -> bytes:
    """The content of the regular, singly-linked file `path` (inside `workspace`, symlink-free)."""
    with _parent(workspace, path, create=False) as parent:
        fd = _open_existing(parent, path)
        if fd is None:
            raise ToolError(f"file not found: {path}")
        try:
            size = os.fstat(fd).st_size
            if size > max_bytes:
                raise ToolError(f"{path} is {size // (1024 * 1024)} MiB; search it with grep or read parts with bash")
            return _read_all(fd)
        finally:
            os.close(fd)


def open_regular_file(workspace: Roots, path: Path) -> int:
    """A read descriptor on the regular, singly-linked file `path` (inside `workspace`, symlink-free), for a
    program to read as its stdin (grep of one file): the caller closes it."""
    with _parent(workspace, path, create=False) as parent:
        fd = _open_existing(parent, path)
        if fd is None:
            raise ToolError(f"file not found: {path}")
        return fd


def replace_file(workspace: Roots, path: Path, data: bytes) -> bytes | None:
    """Write `data` to `path` atomically, creating missing parent directories; return the old
    content (None for a new file)."""
    with _parent(workspace, path, create=True) as parent:
        old_fd = _open_existing(parent, path)
        old: bytes | None = None
        mode = None
        if old_fd is not None:
            try:
                mode = stat.S_IMODE(os.fstat(old_fd).st_mode)
                old = _read_all(old_fd)
            finally:
                os.close(old_fd)
        _write_and_rename(parent, path.name, data, mode)
        return old


@contextlib.contextmanager
def _parent(workspace: Roots, path: Path, *, create: bool) -> Iterator[int]:
    """A descriptor of `path`'s directory, reached from the root holding it without following links."""
    root = root_of(workspace, path)
    if path == root:
        raise ToolError(f"{path} is a directory")
    parts = path.relative_to(root).parts[:-1]
    if any(part in (".", "..") for part in path.relative_to(root).parts):  # `..` is no link: O_NOFOLLOW passes it
        raise ToolError(f"{path} is not a plain path inside the workspace; refused")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            child = _enter(fd, part, create, root.joinpath(*parts[: index + 1]))
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _enter(fd: int, name: str, create: bool, shown: Path) -> int:
    """Open the subdirectory `name` of `fd`, creating it first if asked."""
    try:
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise ToolError(f"directory not found: {shown}") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
    except NotADirectoryError:
        raise ToolError(f"{shown} is not a directory (or was just replaced by a symlink)") from None
    except OSError as exc:
        raise ToolError(f"cannot open {shown}: {exc.strerror}") from None


def _open_existing(parent: int, path: Path) -> int | None:
    """A read descriptor on the existing regular file `path.name` in `parent`; None if there is none."""
    try:
        info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    _check_kind(info, path)  # before opening: opening a device can have side effects
    try:
        fd = os.open(path.name, _READ_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{path} was just replaced by a symlink; refused") from None
        raise ToolError(f"cannot open {path}: {exc.strerror}") from None
    try:
        opened = os.fstat(fd)
        _check_kind(opened, path)  # what was opened, whatever happened since the stat
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_kind(info: os.stat_result, path: Path) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{path} is a directory")
    if stat.S_ISLNK(info.st_mode):
        raise ToolError(f"{path} was just replaced by a symlink; refused")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path} is not a regular file (a FIFO, socket or device); refused")
    if info.st_nlink > 1:
        raise ToolError(
            f"{path} has {info.st_nlink} hard links; refused, since another name for it may lie outside the workspace"
        )


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_and_rename(parent: int, name: str, data: bytes, mode: int | None) -> None:
    temp = f".{name}.{uuid.uuid4().hex[:12]}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, 0o666, dir_fd=parent)  # a new file gets the usual umask'd mode
    except OSError as exc:
        raise ToolError(f"cannot write in the directory of {name}: {exc.strerror}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=parent)
        if isinstance(exc, OSError):
            raise ToolError(f"cannot write {name}: {exc.strerror}") from None
        raise
    os.fsync(parent)  # the rename itself survives a crash
