"""terraform (or tofu) from PATH: `fmt -check` on files, `validate -json` on initialized directories.

A fmt finding points at the first line that fmt would change (read from its `-diff`), so that it is a
`file:line` like every other finding.

Neither runs `init` nor touches the network: validate runs only where `.terraform/` already exists.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from iac_code.iac.checker import Selection, Tree, Unit, is_initialized, unsafe_exclusions
from iac_code.iac.checkers.external import PARALLEL_RUNS, ProgramChecker, rel_join, run_program
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding, Severity
from iac_code.iac.snapshot import snapshot

FMT_BATCH = 200  # files per command line
NOT_INITIALIZED = "not initialized (validate needs `terraform init` to have run there)"
PLUGIN_FOLDERS = ("providers", "plugins")  # under .terraform/: where init installs providers (plugins: before 0.13)


class TerraformChecker(ProgramChecker):
    programs = ("terraform", "tofu")
    version_args = ("version",)


class TerraformFmtChecker(TerraformChecker):
    name = "terraform-fmt"
    summary = "canonical formatting of .tf/.tfvars (terraform or tofu fmt -check, if on PATH)"
    timeout = 120.0

    def select(self, tree: Tree) -> Selection:
        units = tree.file_units({FileKind.TERRAFORM, FileKind.TFVARS})
        return Selection(units=[u for u in units if u.rel.endswith((".tf", ".tfvars"))])

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        program = self.program()
        results: dict[str, list[Finding]] = {}
        for start in range(0, len(units), FMT_BATCH):
            batch = units[start : start + FMT_BATCH]
            # terraform is given copies of the files as we read them (see iac.snapshot), not their paths
            async with snapshot(f for unit in batch for f in unit.files) as copies:
                unformatted = await self._unformatted(program, copies, [u.rel for u in batch])
            for rel, line in unformatted.items():
                message = "not in canonical format: run `terraform fmt`"
                results[rel] = [Finding(self.name, "fmt", "info", rel, line, message)]
        return results

    async def _unformatted(self, program: str, copies: Path, rels: list[str]) -> dict[str, int | None]:
        """Each file fmt would change → the first line it would change."""
        command = [program, "fmt", "-check", "-diff", "-no-color", *rels]
        run = await run_program(command, copies, self.timeout)
        if run.code in (0, 3):
            return first_changed_lines(run.stdout)
        if len(rels) == 1:
            return {}  # it does not parse: the HCL syntax check reports that
        # One file that does not parse stops the whole batch: check the files one by one.
        semaphore = asyncio.Semaphore(PARALLEL_RUNS * 2)

        async def one(rel: str) -> dict[str, int | None]:
            async with semaphore:
                return await self._unformatted(program, copies, [rel])

        return {rel: line for found in await asyncio.gather(*(one(rel) for rel in rels)) for rel, line in found.items()}


def first_changed_lines(diff: str) -> dict[str, int | None]:
    """From `fmt -diff`'s unified diffs (`--- old/REL`, `+++ new/REL`, `@@ -START,…`): each file and the first
    line of it that a hunk removes (or, for a hunk that only adds, where it starts)."""
    found: dict[str, int | None] = {}
    rel: str | None = None
    line = 0
    for text in diff.splitlines():
        if text.startswith("--- old/"):
            rel = text.removeprefix("--- old/")
            found[rel] = None
        elif rel is None or found[rel] is not None or text.startswith("+++ "):
            continue
        elif text.startswith("@@ -"):
            line = int(text.removeprefix("@@ -").split(",")[0].split(" ")[0])
        elif text.startswith(("-", "+")):
            found[rel] = max(line, 1)
        else:
            line += 1  # a context line before the first change
    return found


class TerraformValidateChecker(TerraformChecker):
    name = "terraform-validate"
    summary = "terraform (or tofu) validate -json in directories already initialized (if on PATH)"
    timeout = 180.0

    @property
    def command(self) -> str:
        return f"{Path(self.program()).name} validate"

    def workspace_code(self, tree: Tree, unit: Unit) -> str | None:
        """validate starts every provider the configuration needs, from the directory's `.terraform/`: in a
        repository that commits `.terraform/`, code anyone could have put there."""
        data = tree.absolute(unit.rel) / ".terraform"
        if any(_has_entries(data / folder) for folder in PLUGIN_FOLDERS):
            return f"the provider plugins in {PurePosixPath(unit.rel, '.terraform')}"
        return None

    def select(self, tree: Tree) -> Selection:
        selection = Selection()
        for unit in tree.terraform_dirs():
            if is_initialized(tree.absolute(unit.rel)):
                selection.units.append(unit)
            else:
                selection.excluded.append((unit.rel, NOT_INITIALIZED))
        selection.excluded.extend(unsafe_exclusions(tree.unsafe_terraform_dirs))
        return selection

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        program = self.program()
        semaphore = asyncio.Semaphore(PARALLEL_RUNS)

        async def one(unit: Unit) -> tuple[str, list[Finding]]:
            async with semaphore:
                run = await run_program(
                    [program, "validate", "-json", "-no-color"], tree.absolute(unit.rel), self.timeout
                )
            return unit.rel, self._findings(unit.rel, run.stdout, run.stderr)

        return dict(await asyncio.gather(*(one(unit) for unit in units)))

    def _findings(self, directory: str, stdout: str, stderr: str) -> list[Finding]:
        try:
            report = json.loads(stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"terraform validate gave no JSON: {(stderr or stdout).strip()[:300]}") from None
        return [self._finding(directory, item) for item in report.get("diagnostics", [])]

    def _finding(self, directory: str, diagnostic: dict[str, Any]) -> Finding:
        where = diagnostic.get("range") or {}
        filename = where.get("filename")
        line = (where.get("start") or {}).get("line")
        severity: Severity = "error" if diagnostic.get("severity") == "error" else "warning"
        summary = str(diagnostic.get("summary", "")).strip()
        detail = " ".join(str(diagnostic.get("detail", "")).split())
        message = f"{summary}: {detail}" if detail else summary
        rel = rel_join(directory, filename) if filename else directory
        return Finding(self.name, "validate", severity, rel, line if isinstance(line, int) else None, message)


def _has_entries(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(True for _ in entries)
    except OSError:
        return False
