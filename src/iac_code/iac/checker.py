"""The Checker protocol and the units it checks.

A unit is what one cached result covers: a single file for most checks, a whole Terraform directory for
checks that read the directory as one configuration (terraform validate, tflint, checkov's Terraform
graph), a whole chart for Helm. Its digest covers everything the result depends on, so a changed file
re-runs only the units that contain it. A directory holding a file no program may be handed (a FIFO, a
symlink to a device, a file over the size cap: see handed_dirs) is not a unit: the checkers that read
whole directories exclude it, and the tree records the files and why.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.handed_dirs import Problem, linked_files, terraform_dir_problems, tree_problems
from iac_code.iac.safe_read import UnsafeFile, read_beneath
from iac_code.iac.sources import MAX_FILE_BYTES, LeftOut, SourceFile, load_sources
from iac_code.iac.walk import list_candidate_files

TERRAFORM_DIR_KINDS = frozenset({FileKind.TERRAFORM, FileKind.TFVARS})
_LOCAL_MODULE = re.compile(r"""\bsource\s*=\s*"(\.{1,2}/[^"]*)\"""")
MODULE_DEPTH = 5
UNSAFE_DIRECTORY = "holds files no program may be handed (see the unsafe-file findings)"


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

    def __init__(self, workspace: Path, sources: list[SourceFile], left_out: LeftOut | None = None) -> None:
        self.workspace = workspace.resolve()
        self.sources = sources
        self.left_out = left_out if left_out is not None else LeftOut()
        # directory rel -> its files (workspace-relative) no program may be handed, with why
        self.unsafe_terraform_dirs: dict[str, list[Problem]] = {}
        self.unsafe_charts: dict[str, list[Problem]] = {}
        self._terraform_dirs: list[Unit] | None = None  # several checkers ask for them
        self._helm_charts: list[Unit] | None = None

    def file_units(self, kinds: Iterable[FileKind]) -> list[Unit]:
        wanted = frozenset(kinds)
        return [Unit(rel=s.rel, files=(s,)) for s in self.sources if s.kind in wanted]

    def terraform_dirs(self) -> list[Unit]:
        """One unit per directory holding .tf files, with all of that directory's Terraform files; the
        directories holding a file no program may be handed are left out (see `unsafe_terraform_dirs`)."""
        if self._terraform_dirs is None:
            dirs = sorted({_parent(s.rel) for s in self.sources if s.kind is FileKind.TERRAFORM})
            units = [self._terraform_dir(rel) for rel in dirs]
            self._terraform_dirs = [unit for unit in units if unit is not None]
        return list(self._terraform_dirs)

    def helm_charts(self) -> list[Unit]:
        if self._helm_charts is None:
            charts = sorted({_parent(s.rel) for s in self.sources if s.kind is FileKind.HELM_CHART})
            units = [self._helm_chart(rel) for rel in charts]
            self._helm_charts = [unit for unit in units if unit is not None]
        return list(self._helm_charts)

    def unsafe_dirs(self) -> dict[str, list[Problem]]:
        """The directories left out of terraform_dirs() and helm_charts() so far, with their unsafe files."""
        return {**self.unsafe_terraform_dirs, **self.unsafe_charts}

    def absolute(self, rel: str) -> Path:
        return self.workspace / rel if rel != "." else self.workspace

    def _terraform_dir(self, rel: str) -> Unit | None:
        directory = self.absolute(rel)
        problems = _problems(self.workspace, directory, terraform_dir_problems)
        if not self._judge(self.unsafe_terraform_dirs, rel, problems):
            return None
        sources = _directory_sources(self.workspace, directory, self.left_out)
        files = tuple(s for s in sources if s.kind in TERRAFORM_DIR_KINDS)
        extra = [
            _file_digest(self.workspace, directory / ".terraform.lock.hcl"),
            _file_digest(self.workspace, directory / ".terraform/modules/modules.json"),
            linked_files(directory),
        ]
        extra.append(str((directory / ".terraform").is_dir()))
        modules, problems = _local_modules(self.workspace, files, self.left_out)
        if not self._judge(self.unsafe_terraform_dirs, rel, problems):
            return None
        extra.extend(modules)
        return Unit(rel=rel, files=files, is_dir=True, extra="\0".join(extra))

    def _helm_chart(self, rel: str) -> Unit | None:
        directory = self.absolute(rel)
        if not self._judge(self.unsafe_charts, rel, _problems(self.workspace, directory, tree_problems)):
            return None
        files = tuple(load_sources(self.workspace, list_candidate_files(directory), self.left_out))
        return Unit(rel=rel, files=files, is_dir=True)

    def _judge(self, unsafe: dict[str, list[Problem]], rel: str, problems: list[Problem]) -> bool:
        """True when `problems` is empty; else the directory and its files are recorded as unsafe."""
        if not problems:
            return True
        unsafe.setdefault(rel, []).extend(problems)
        self.left_out.unsafe.update(problems)
        return False


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


def unsafe_exclusions(unsafe: Mapping[str, object]) -> list[tuple[str, str]]:
    """Selection.excluded entries for the directories of `unsafe` (tree.unsafe_terraform_dirs, unsafe_charts)."""
    return [(rel, UNSAFE_DIRECTORY) for rel in sorted(unsafe)]


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


def _problems(workspace: Path, directory: Path, scan: Callable[[Path], list[Problem]]) -> list[Problem]:
    """`scan(directory)`'s problems, with workspace-relative paths."""
    return [((directory / name).relative_to(workspace).as_posix(), why) for name, why in scan(directory)]


def _directory_sources(workspace: Path, directory: Path, left_out: LeftOut) -> list[SourceFile]:
    """The regular files directly in `directory` (symlinks are not followed), within the size cap."""
    try:
        with os.scandir(directory) as entries:
            paths = sorted(Path(entry.path) for entry in entries if entry.is_file(follow_symlinks=False))
    except OSError:
        return []
    return load_sources(workspace, paths, left_out)


def _file_digest(workspace: Path, path: Path) -> str:
    try:
        data = read_beneath(workspace, path.relative_to(workspace).as_posix(), MAX_FILE_BYTES)
    except UnsafeFile as exc:
        return f"-{exc.reason}"
    except OSError:
        return "-"
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _local_modules(workspace: Path, files: Sequence[SourceFile], left_out: LeftOut) -> tuple[list[str], list[Problem]]:
    """Digests of the local modules (`source = "./..."`) the directory uses, followed a few levels deep, and
    the files in them no program may be handed (terraform reads those directories too)."""
    seen: set[Path] = set()
    digests: list[str] = []
    problems: list[Problem] = []
    frontier = list(files)
    for _ in range(MODULE_DEPTH):
        next_frontier: list[SourceFile] = []
        for source in frontier:
            if source.kind is not FileKind.TERRAFORM:
                continue
            for target in _module_sources(source):
                module = (source.path.parent / target).resolve()
                if module in seen or not module.is_dir() or not module.is_relative_to(workspace):
                    continue
                seen.add(module)
                problems.extend(_problems(workspace, module, terraform_dir_problems))
                module_files = [
                    s for s in _directory_sources(workspace, module, left_out) if s.kind is FileKind.TERRAFORM
                ]
                digests.extend(f"{s.rel}:{s.digest}" for s in module_files)
                next_frontier.extend(module_files)
        frontier = next_frontier
    return sorted(digests), problems


@functools.lru_cache(maxsize=4096)
def _module_sources(source: SourceFile) -> tuple[str, ...]:
    """The local module paths a .tf file names (memoised by content digest: unchanged files are not re-read)."""
    try:
        return tuple(_LOCAL_MODULE.findall(source.text()))
    except OSError:
        return ()
