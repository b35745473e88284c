"""Where saved plans live: private files under the config directory, one folder per session, never in the
workspace (a plan file holds every value of the plan, sensitive ones included, in the clear).

The folder is 0700 and each file 0600, created empty before terraform writes into it (terraform keeps the
mode of a file it overwrites). A session's plans go when the session is deleted (`discard_session_plans`);
one applied is discarded by whoever applied it; beyond the KEPT_PLANS newest, the oldest go.

An apply is never handed the reviewed file's path (another file renamed over it after the check would be
applied unreviewed): `applied_copy` reads the plan once through an open descriptor into a fresh 0700
folder of its own, hashing the bytes it copies, and the apply is given that copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import uuid
from pathlib import Path
from typing import Any

PLANS_FOLDER = "plans"
PLAN_SUFFIX = ".tfplan"
APPLY_PREFIX = "apply-"  # the fresh folder of one apply's copy (applied_copy)
COPY_CHUNK = 1 << 20
KEPT_PLANS = 20  # per session: older ones go as new ones are made (a headless run's folder is never deleted)
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def session_plans_dir(config_dir: Path, session_id: str) -> Path:
    """`<config_dir>/plans/<session>`: the id itself when it is a plain name, else its hash (an id a client
    chose must not lead anywhere else)."""
    name = session_id if _PLAIN_ID.fullmatch(session_id) else hashlib.sha256(session_id.encode()).hexdigest()[:32]
    return config_dir / PLANS_FOLDER / name


def discard_session_plans(config_dir: Path, session_id: str) -> None:
    """Delete every plan the session saved (the session itself is being deleted)."""
    shutil.rmtree(session_plans_dir(config_dir, session_id), ignore_errors=True)


class PlanStore:
    """A session's saved plans. `directory` None: a private temporary folder (a session without a config
    directory, tests), made on first use."""

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._contracts: dict[Path, dict[str, Any]] = {}  # the plans made here by this process, by file

    def remember(self, contract: dict[str, Any]) -> None:
        """Keep the contract of a plan made here, for a later apply that names its file."""
        self._contracts[Path(contract["planFile"])] = contract

    def contract_for(self, plan_file: Path) -> dict[str, Any] | None:
        """The contract of a plan this store made and still holds (None: not one of its plans, or gone)."""
        contract = self._contracts.get(plan_file)
        return contract if contract is not None and plan_file.exists() else None

    @property
    def directory(self) -> Path:
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="iac-code-plans-"))
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self._directory, 0o700)  # an existing folder made by someone else's umask
        return self._directory

    def new_plan_file(self) -> Path:
        """A new, empty, 0600 file for terraform's -out (the oldest plans beyond KEPT_PLANS discarded)."""
        path = self.directory / f"{uuid.uuid4().hex}{PLAN_SUFFIX}"
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        self._prune(keep=path)
        return path

    def _prune(self, keep: Path) -> None:
        plans = []
        for candidate in self.directory.glob(f"*{PLAN_SUFFIX}"):
            with contextlib.suppress(OSError):
                plans.append((candidate.stat().st_mtime_ns, candidate))
        plans.sort(reverse=True)
        for _, old in plans[KEPT_PLANS:]:
            if old != keep:
                self.discard(old)

    def applied_copy(self, plan_file: Path, sha256: str) -> Path | None:
        """A private copy of `plan_file` for an apply, when its bytes still hash to `sha256` (else None): read
        once through one descriptor (no symlink followed), hashed as written into a new 0600 file in a fresh
        0700 folder under the store. The caller applies the copy and discards it with `discard_copy`."""
        folder = Path(tempfile.mkdtemp(prefix=APPLY_PREFIX, dir=self.directory))
        copy = folder / plan_file.name
        try:
            digest = _copy_hashing(plan_file, copy)
        except OSError:
            digest = None
        if digest != sha256:
            self.discard_copy(copy)
            return None
        return copy

    def discard_copy(self, copy: Path) -> None:
        """Delete an apply's copy and its folder."""
        shutil.rmtree(copy.parent, ignore_errors=True)

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of this store's plan files (a plan a line names was made here)."""
        return self._directory is not None and path.parent == self._directory and path.suffix == PLAN_SUFFIX

    def discard(self, path: Path) -> None:
        """Delete a plan file (applied, failed, or too old)."""
        self._contracts.pop(path, None)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _copy_hashing(source: Path, target: Path) -> str:
    """Copy `source` (a regular file, not a symlink) into the new file `target`; the sha256 of the bytes copied."""
    digest = hashlib.sha256()
    reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(reader).st_mode):
            raise OSError(f"{source} is not a regular file")
        writer = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(reader, COPY_CHUNK):
                digest.update(chunk)
                _write_all(writer, chunk)
        finally:
            os.close(writer)
    finally:
        os.close(reader)
    return digest.hexdigest()


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
