"""A checker's crash or timeout is remembered by content like a result: an unchanged costly input is paid
once, an edit runs it again, a missing tool is never remembered, and the memory lasts a bounded time."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from iac_code.iac import cache as cache_module
from iac_code.iac.cache import ResultCache
from iac_code.iac.checker import Checker, CheckerUnavailable, Selection, Tree, Unit
from iac_code.iac.checkers.terraform import TerraformFmtChecker
from iac_code.iac.classify import FileKind
from iac_code.iac.engine import CheckReport, run_checks
from iac_code.iac.findings import Finding


class SlowChecker:
    """Times out on every run; counts the runs."""

    name = "slow"
    summary = "test"
    timeout = 0.2

    def __init__(self) -> None:
        self.runs = 0

    def version(self) -> str:
        return "1"

    def select(self, tree: Tree) -> Selection:
        return Selection(units=tree.file_units({FileKind.TERRAFORM}))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        self.runs += 1
        await asyncio.sleep(30)
        return {}


class CrashingChecker(SlowChecker):
    name = "crashing"

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        self.runs += 1
        raise RuntimeError("the parser blew its memory limit")


class MissingChecker(SlowChecker):
    name = "missing"

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        self.runs += 1
        raise CheckerUnavailable("missing-tool not found on PATH")


def check(workspace: Path, checker: Checker, cache: ResultCache) -> CheckReport:
    return asyncio.run(run_checks(workspace, workspace, {checker.name: checker}, cache))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.tf").write_text("locals {}\n")
    (tmp_path / "b.tf").write_text("locals {\n  b = 1\n}\n")
    return tmp_path


@pytest.mark.parametrize("checker_class", [SlowChecker, CrashingChecker])
def test_a_failure_is_paid_once_and_an_edit_runs_it_again(workspace: Path, checker_class: type[SlowChecker]) -> None:
    checker, cache = checker_class(), ResultCache(None)
    first = check(workspace, checker, cache)
    second = check(workspace, checker, cache)
    assert checker.runs == 1
    (reason,) = [s.reason for s in second.skipped]
    assert reason.startswith(first.skipped[0].reason) and "remembered from an earlier run" in reason
    assert "a.tf" in reason and "b.tf" in reason
    assert second.ran == []

    (workspace / "a.tf").write_text("locals {\n  a = 2\n}\n")
    third = check(workspace, checker, cache)
    assert checker.runs == 2  # a.tf alone, b.tf is still remembered
    assert len(third.skipped) == 2


def test_a_missing_tool_is_not_remembered(workspace: Path) -> None:
    checker, cache = MissingChecker(), ResultCache(None)
    check(workspace, checker, cache)
    check(workspace, checker, cache)
    assert checker.runs == 2


def test_a_remembered_failure_survives_a_restart_and_expires(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = workspace.parent / "config" / "iac-check.sqlite"
    checker = CrashingChecker()
    check(workspace, checker, ResultCache(database))
    check(workspace, checker, ResultCache(database))  # a new process would open the same file
    assert checker.runs == 1
    monkeypatch.setattr(cache_module, "FAILURE_LIFETIME", -1.0)  # as if it had been remembered long ago
    check(workspace, checker, ResultCache(database))
    assert checker.runs == 2


def test_a_costly_file_does_not_start_terraform_fmt_twice(
    workspace: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in terraform that hangs on fmt (as the real one spins for minutes on 1 MB of random bytes)."""
    tools = tmp_path_factory.mktemp("bin")
    log = tools / "calls.log"
    script = tools / "terraform"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = version ]; then echo "Terraform v1.9.0"; exit 0; fi\necho "$*" >> "{log}"\nsleep 30\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    fmt = TerraformFmtChecker()
    fmt.timeout = 1.0
    cache = ResultCache(None)
    started = time.monotonic()
    first = check(workspace, fmt, cache)
    second = check(workspace, fmt, cache)
    assert time.monotonic() - started < 15
    assert [s.reason for s in first.skipped] == ["timed out after 1 s"]
    assert "remembered" in second.skipped[0].reason
    assert len(log.read_text().splitlines()) == 1  # the second check started no terraform
