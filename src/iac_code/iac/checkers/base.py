"""Shared shape of our own checkers that read one file at a time (HCL, YAML, ROS).

Their parsing runs in a parse worker (parse_workers.py), never in the agent: `check()` sends the files'
names there, and `check_files()` runs in the worker, reading each file without following symlinks and
with the walk's size cap, and calling the checker's `check_file()`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from iac_code.iac.checker import CheckerUnavailable, Selection, Tree, Unit
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.parse_workers import call_in_worker
from iac_code.iac.sources import SourceFile, read_text

TOO_DEEP = "nested too deeply to be parsed (over a thousand levels): not checked"


class FileByFileChecker:
    """Subclasses set name, summary, kinds, `package` (whose version keys the cache) and write check_file()."""

    name = ""
    summary = ""
    timeout = 60.0
    kinds: frozenset[FileKind] = frozenset()
    package = ""  # the distribution that does the work ("" : our own code only)
    revision = "1"  # bump when check_file() changes what it reports

    def version(self) -> str:
        if not self.package:
            return self.revision
        try:
            return f"{metadata.version(self.package)}+{self.revision}"
        except metadata.PackageNotFoundError:
            raise CheckerUnavailable(f"the Python package {self.package} is not installed") from None

    def select(self, tree: Tree) -> Selection:
        return Selection(units=[u for u in tree.file_units(self.kinds) if self.applies_to(u.files[0])])

    def applies_to(self, source: SourceFile) -> bool:
        return True

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        args = {
            "checker": f"{type(self).__module__}:{type(self).__qualname__}",
            "root": str(tree.workspace),
            "files": [[unit.files[0].rel, unit.files[0].kind.value] for unit in units],
        }
        answer: dict[str, list[dict[str, Any]]] = await call_in_worker(f"{__name__}:check_files", args, self.timeout)
        return {rel: [Finding.from_dict(item) for item in items] for rel, items in answer.items()}

    def check_file(self, source: SourceFile, text: str) -> list[Finding]:
        raise NotImplementedError


def check_files(checker: str, root: str, files: list[list[str]]) -> dict[str, list[dict[str, Any]]]:
    """In a parse worker: `checker` ("module:Class") on `files` ([rel, kind]) under `root`, as JSON."""
    instance = _instance(checker)
    results: dict[str, list[dict[str, Any]]] = {}
    for rel, kind in files:
        try:
            text = read_text(Path(root), rel)
        except OSError:
            continue  # gone, swapped for a link or grown past the cap since it was listed: nothing to parse
        source = SourceFile(path=Path(root, rel), rel=rel, kind=FileKind(kind), digest="")
        try:
            findings = instance.check_file(source, text)
        except RecursionError:  # the parsers recurse per level: one file must not void the others' results
            findings = [Finding(instance.name, "too-deep", "warning", rel, None, TOO_DEEP)]
        results[rel] = [finding.to_dict() for finding in findings]
    return results


@functools.cache
def _instance(checker: str) -> FileByFileChecker:
    module, _, name = checker.partition(":")
    instance = getattr(importlib.import_module(module), name)()
    if not isinstance(instance, FileByFileChecker):
        raise TypeError(f"{checker} is not a file-by-file checker")
    return instance
