"""The Checker protocol and the units it checks.

A unit is what one cached result covers: a single file for most checks, a whole Terraform directory for
checks that read the directory as one configuration (terraform validate, tflint, checkov's Terraform
graph), a whole chart for Helm. Its digest covers everything the result depends on, so a changed file
re-runs only the units that contain it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.sources import SourceFile, load_sources
from iac_code.iac.walk import list_candidate_files

TERRAFORM_DIR_KINDS = frozenset({FileKind.TERRAFORM, FileKind.TFVARS})
_LOCAL_MODULE = re.compile(r"""\bsource\s*=\s*"(\.{1,2}/[^"]*)\"""")
MODULE_DEPTH = 5


class CheckerUnavailable(Exception):
    """The checker cannot run here (tool not installed, not on PATH...); the message says why and how to fix."""


@dataclass(frozen=True)
class Unit:
    rel: str  # the file, or the directory ("." for the workspace root), relative to the workspace
    files: tuple[SourceFile, ...]
    is_dir: bool = False
    extra: str = ""  # digests of what else the result depends on (lock file, local modules...)

    @property
    def digest(self) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(f"{self.rel}\0{self.is_dir}\0{self.extra}".encode())
        for source in self.files:
            h.update(f"\0{source.rel}\0{source.kind}\0{source.digest}".encode())
        return h.hexdigest()


@dataclass
class Selection:
    """The units a checker will check, and those it cannot check with the reason (e.g. not initialized)."""

    units: list[Unit] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (unit rel, reason)


class Tree:
    """The files in scope of one check, and the units built from them for each checker."""

    def __init__(self, workspace: Path, sources: list[SourceFile]) -> None:
        self.workspace = workspace.resolve()
        self.sources = sources
        self._terraform_dirs: list[Unit] | None = None  # several checkers ask for them

    def file_units(self, kinds: Iterable[FileKind]) -> list[Unit]:
        wanted = frozenset(kinds)
        return [Unit(rel=s.rel, files=(s,)) for s in self.sources if s.kind in wanted]

    def terraform_dirs(self) -> list[Unit]:
        """One unit per directory holding .tf files, with all of that directory's Terraform files."""
        if self._terraform_dirs is None:
            dirs = sorted({_parent(s.rel) for s in self.sources if s.kind is FileKind.TERRAFORM})
            self._terraform_dirs = [self._terraform_dir(rel) for rel in dirs]
        return list(self._terraform_dirs)

    def helm_charts(self) -> list[Unit]:
        charts = sorted({_parent(s.rel) for s in self.sources if s.kind is FileKind.HELM_CHART})
        units = []
        for rel in charts:
            directory = self.absolute(rel)
            files = tuple(load_sources(self.workspace, list_candidate_files(directory)))
            units.append(Unit(rel=rel, files=files, is_dir=True))
        return units

    def absolute(self, rel: str) -> Path:
        return self.workspace / rel if rel != "." else self.workspace

    def _terraform_dir(self, rel: str) -> Unit:
        directory = self.absolute(rel)
        files = tuple(s for s in _directory_sources(self.workspace, directory) if s.kind in TERRAFORM_DIR_KINDS)
        extra = [
            _file_digest(directory / ".terraform.lock.hcl"),
            _file_digest(directory / ".terraform/modules/modules.json"),
        ]
        extra.append(str((directory / ".terraform").is_dir()))
        extra.extend(_local_module_digests(self.workspace, files))
        return Unit(rel=rel, files=files, is_dir=True, extra="\0".join(extra))


class Checker(Protocol):
    name: str
    summary: str  # what it checks, one line for the tool description
    timeout: float  # seconds for one run over a batch of units

    def version(self) -> str:
        """The checked tool's version (part of the cache key); raises CheckerUnavailable when it cannot run."""
        ...

    def select(self, tree: Tree) -> Selection:
        """The units of `tree` this checker applies to."""
        ...

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        """Findings per unit rel for `units` (a unit without findings may be left out)."""
        ...


@runtime_checkable
class RunsWorkspaceCode(Protocol):
    """A checker whose tool may start code the repository ships (provider or linter plugins): the engine asks
    before such a unit is checked, as an "execute" of the workspace's code, and leaves it out if refused."""

    @property
    def command(self) -> str:
        """What runs, as the user knows it ("terraform validate")."""
        ...

    def workspace_code(self, tree: Tree, unit: Unit) -> str | None:
        """The workspace's code that checking `unit` would start ("the provider plugins in net/.terraform"),
        or None when it starts none."""
        ...


def is_initialized(directory: Path) -> bool:
    """Whether `terraform init` has run in `directory` (what validate needs)."""
    return (directory / ".terraform").is_dir()


def _parent(rel: str) -> str:
    return PurePosixPath(rel).parent.as_posix()


def _directory_sources(workspace: Path, directory: Path) -> list[SourceFile]:
    try:
        paths = sorted(p for p in directory.iterdir() if p.is_file())
    except OSError:
        return []
    return load_sources(workspace, paths)


def _file_digest(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except OSError:
        return "-"


def _local_module_digests(workspace: Path, files: Sequence[SourceFile]) -> list[str]:
    """Digests of the local modules (`source = "./..."`) the directory uses, followed a few levels deep."""
    seen: set[Path] = set()
    digests: list[str] = []
    frontier = list(files)
    for _ in range(MODULE_DEPTH):
        next_frontier: list[SourceFile] = []
        for source in frontier:
            if source.kind is not FileKind.TERRAFORM:
                continue
            for target in _module_sources(source.path, source.digest):
                module = (source.path.parent / target).resolve()
                if module in seen or not module.is_dir() or not module.is_relative_to(workspace):
                    continue
                seen.add(module)
                module_files = [s for s in _directory_sources(workspace, module) if s.kind is FileKind.TERRAFORM]
                digests.extend(f"{s.rel}:{s.digest}" for s in module_files)
                next_frontier.extend(module_files)
        frontier = next_frontier
    return sorted(digests)


@functools.lru_cache(maxsize=4096)
def _module_sources(path: Path, digest: str) -> tuple[str, ...]:
    """The local module paths a .tf file names (memoised by content digest: unchanged files are not re-read)."""
    try:
        return tuple(_LOCAL_MODULE.findall(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return ()
