"""The files a check looks at: path, kind and content digest, memoised by their stat so that an unchanged
file is neither read nor hashed again.

Every read goes through `safe_read.read_beneath` with the size cap: a file swapped for a symlink to
/dev/zero (or a FIFO, or a huge file) between the walk and the read is refused on the open descriptor,
never read. What is refused is left out of the check and counted in a `LeftOut`, so the tool can say so.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from iac_code.iac.classify import FileKind, chart_roots_of, content_kind, helm_kind
from iac_code.iac.safe_read import UnsafeFile, read_beneath

MEMO_SIZE = 50_000
MAX_FILE_BYTES = 2 * 1024 * 1024  # a larger "template" is generated data, not something to check


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    rel: str  # relative to the workspace, POSIX separators
    kind: FileKind
    digest: str  # of the content

    @property
    def root(self) -> Path:
        """The workspace `rel` is relative to."""
        return self.path.parents[len(PurePosixPath(self.rel).parts) - 1]

    def text(self) -> str:
        """The file's text, as `read_text` reads it."""
        return read_text(self.root, self.rel)


def read_text(root: Path, rel: str) -> str:
    """The text of the workspace file `rel`, read as every check reads one: without following symlinks and
    within the size cap (UnsafeFile, an OSError, when it has been swapped for something else since it was
    listed), undecodable bytes replaced."""
    return read_beneath(root, rel, MAX_FILE_BYTES).decode("utf-8", errors="replace")


@dataclass
class LeftOut:
    """Files a check was not given, and why: for the tool's output, so the model knows its view is partial."""

    over_file_limit: int = 0  # listed by the walk beyond its file limit
    too_large: set[str] = field(default_factory=set)  # rels over MAX_FILE_BYTES
    unsafe: dict[str, str] = field(default_factory=dict)  # rel -> why it was not read (symlink, FIFO...)


@dataclass(frozen=True)
class _Memo:
    stamp: tuple[int, int, int]  # mtime_ns, size, inode
    kind: FileKind  # by name and content, before Helm charts are taken into account
    digest: str


_memo: OrderedDict[str, _Memo] = OrderedDict()
_memo_lock = threading.Lock()


def load_sources(workspace: Path, paths: list[Path], left_out: LeftOut | None = None) -> list[SourceFile]:
    """SourceFiles for `paths` (absolute, inside `workspace`). Files gone since they were listed are dropped;
    files too large or unsafe to read are dropped and recorded in `left_out` when one is given."""
    root = workspace.resolve()
    skipped = left_out if left_out is not None else LeftOut()
    entries: list[tuple[Path, str, _Memo]] = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        memo = _describe(root, path, rel, skipped)
        if memo is not None:
            entries.append((path, rel, memo))
    charts = chart_roots_of([rel for _, rel, _ in entries])
    sources = []
    for path, rel, memo in entries:
        kind = helm_kind(rel, charts) or memo.kind
        sources.append(SourceFile(path=path, rel=rel, kind=kind, digest=memo.digest))
    return sources


def _describe(root: Path, path: Path, rel: str, left_out: LeftOut) -> _Memo | None:
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(status.st_mode):
        left_out.unsafe[rel] = "a symbolic link (not followed)"
        return None
    if status.st_size > MAX_FILE_BYTES and stat.S_ISREG(status.st_mode):
        left_out.too_large.add(rel)
        return None
    stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
    key = str(path)
    with _memo_lock:
        cached = _memo.get(key)
        if cached is not None and cached.stamp == stamp:
            _memo.move_to_end(key)
            return cached
    try:
        data = read_beneath(root, rel, MAX_FILE_BYTES)
    except UnsafeFile as exc:
        left_out.unsafe[rel] = exc.reason
        return None
    except OSError:
        return None  # gone since it was listed
    memo = _Memo(stamp, content_kind(rel, data.decode("utf-8", errors="replace")), hashlib.blake2b(data).hexdigest())
    with _memo_lock:
        _memo[key] = memo
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
    return memo
