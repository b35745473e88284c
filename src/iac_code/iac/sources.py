"""The files a check looks at: path, kind and content digest, memoised by their stat so that an unchanged
file is neither read nor hashed again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from iac_code.iac.classify import FileKind, chart_roots_of, content_kind, helm_kind

MEMO_SIZE = 50_000


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    rel: str  # relative to the workspace, POSIX separators
    kind: FileKind
    digest: str  # of the content

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")


@dataclass(frozen=True)
class _Memo:
    stamp: tuple[int, int, int]  # mtime_ns, size, inode
    kind: FileKind  # by name and content, before Helm charts are taken into account
    digest: str


_memo: OrderedDict[str, _Memo] = OrderedDict()
_memo_lock = threading.Lock()


def load_sources(workspace: Path, paths: list[Path]) -> list[SourceFile]:
    """SourceFiles for `paths` (absolute, inside `workspace`); unreadable files are left out."""
    root = workspace.resolve()
    entries: list[tuple[Path, str, _Memo]] = []
    for path in paths:
        memo = _describe(path, path.relative_to(root).as_posix())
        if memo is not None:
            entries.append((path, path.relative_to(root).as_posix(), memo))
    charts = chart_roots_of([rel for _, rel, _ in entries])
    sources = []
    for path, rel, memo in entries:
        kind = helm_kind(rel, charts) or memo.kind
        sources.append(SourceFile(path=path, rel=rel, kind=kind, digest=memo.digest))
    return sources


def _describe(path: Path, rel: str) -> _Memo | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    key = str(path)
    with _memo_lock:
        cached = _memo.get(key)
        if cached is not None and cached.stamp == stamp:
            _memo.move_to_end(key)
            return cached
    try:
        data = path.read_bytes()
    except OSError:
        return None
    memo = _Memo(stamp, content_kind(rel, data.decode("utf-8", errors="replace")), hashlib.blake2b(data).hexdigest())
    with _memo_lock:
        _memo[key] = memo
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
    return memo
