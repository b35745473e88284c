"""Shared shape of the checkers that run in this process, one file at a time, in a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from importlib import metadata

from iac_code.iac.checker import CheckerUnavailable, Selection, Tree, Unit
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.sources import SourceFile


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
        return await asyncio.to_thread(self._check_units, units)

    def check_file(self, source: SourceFile, text: str) -> list[Finding]:
        raise NotImplementedError

    def _check_units(self, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        results: dict[str, list[Finding]] = {}
        for unit in units:
            source = unit.files[0]
            try:
                text = source.text()
            except OSError:
                continue  # gone since it was listed: nothing to report
            results[unit.rel] = self.check_file(source, text)
        return results
