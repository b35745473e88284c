"""tflint from PATH, one Terraform directory at a time (`tflint --format json --chdir DIR`)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from iac_code.iac.checker import Selection, Tree, Unit, unsafe_exclusions
from iac_code.iac.checkers.external import PARALLEL_RUNS, ProgramChecker, rel_join, run_program
from iac_code.iac.findings import Finding, Severity
from iac_code.iac.safe_read import read_beneath

PLUGIN_FOLDER = ".tflint.d"
CONFIG_FILE = ".tflint.hcl"
CONFIG_LIMIT = 1024 * 1024
SEVERITIES: dict[str, Severity] = {"error": "error", "warning": "warning", "notice": "info", "info": "info"}


class TflintChecker(ProgramChecker):
    name = "tflint"
    summary = "tflint on each Terraform directory (if on PATH)"
    timeout = 180.0
    programs = ("tflint",)

    command = "tflint"

    def workspace_code(self, tree: Tree, unit: Unit) -> str | None:
        """tflint loads plugins from `.tflint.d/plugins` beside it, or from the `plugin_dir` its `.tflint.hcl`
        names: a repository can ship both. Its run has the workspace as cwd and the unit as --chdir."""
        for rel in dict.fromkeys((unit.rel, ".")):
            folder = PurePosixPath(rel)
            if os.path.lexists(tree.absolute(rel) / PLUGIN_FOLDER):
                return f"the tflint plugins in {folder / PLUGIN_FOLDER}"
            config = (folder / CONFIG_FILE).as_posix()
            try:
                text = read_beneath(tree.workspace, config, CONFIG_LIMIT)
            except FileNotFoundError:
                continue
            except OSError:  # unsafe or unreadable: tflint would read it all the same, so assume the worst
                return f"whatever {config} loads"
            if b"plugin_dir" in text:
                return f"the plugins in the plugin_dir that {config} names"
        return None

    def select(self, tree: Tree) -> Selection:
        units = tree.terraform_dirs()
        return Selection(units=units, excluded=unsafe_exclusions(tree.unsafe_terraform_dirs))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        program = self.program()
        semaphore = asyncio.Semaphore(PARALLEL_RUNS)

        async def one(unit: Unit) -> tuple[str, list[Finding]]:
            directory = tree.absolute(unit.rel)
            async with semaphore:
                run = await run_program(
                    [program, "--format", "json", "--no-color", f"--chdir={directory}"], tree.workspace, self.timeout
                )
            try:
                report = json.loads(run.stdout)
            except json.JSONDecodeError:
                raise RuntimeError(f"tflint gave no JSON: {(run.stderr or run.stdout).strip()[:300]}") from None
            return unit.rel, self._findings(tree, unit.rel, report)

        return dict(await asyncio.gather(*(one(unit) for unit in units)))

    def _findings(self, tree: Tree, directory: str, report: dict[str, Any]) -> list[Finding]:
        findings = []
        for issue in report.get("issues") or []:
            rule = issue.get("rule") or {}
            severity = SEVERITIES.get(str(rule.get("severity", "")).lower(), "warning")
            rel, line = self._where(tree, directory, issue.get("range") or {})
            findings.append(
                Finding(self.name, str(rule.get("name", "tflint")), severity, rel, line, str(issue.get("message", "")))
            )
        for error in report.get("errors") or []:
            rel, line = self._where(tree, directory, error.get("range") or {})
            findings.append(Finding(self.name, "tflint-error", "error", rel, line, str(error.get("message", ""))))
        return findings

    def _where(self, tree: Tree, directory: str, where: dict[str, Any]) -> tuple[str, int | None]:
        filename = str(where.get("filename") or "")
        line = (where.get("start") or {}).get("line")
        if os.path.isabs(filename):
            filename = os.path.relpath(filename, tree.absolute(directory))
        rel = rel_join(directory, filename) if filename else directory
        return rel, line if isinstance(line, int) and line >= 1 else None
