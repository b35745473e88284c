"""The engine around the checkers: failures land in `skipped`, the cache answers for unchanged units, and
an edit re-runs only the units it touches."""

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from iac_code.iac.cache import ResultCache
from iac_code.iac.checker import Checker, CheckerUnavailable, Selection, Tree, Unit
from iac_code.iac.checkers.syntax import HclSyntaxChecker
from iac_code.iac.classify import FileKind
from iac_code.iac.engine import CheckReport, run_checks
from iac_code.iac.findings import Finding
from iac_code.iac.workers import WorkerTimeout


class CountingChecker:
    """One info finding per file; remembers which units it was asked to check."""

    name = "counting"
    summary = "test"
    timeout = 10.0

    def __init__(self, per_directory: bool = False) -> None:
        self.per_directory = per_directory
        self.checked: list[list[str]] = []

    def version(self) -> str:
        return "1"

    def select(self, tree: Tree) -> Selection:
        return Selection(units=tree.terraform_dirs() if self.per_directory else tree.file_units({FileKind.TERRAFORM}))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        self.checked.append([u.rel for u in units])
        return {u.rel: [Finding(self.name, "seen", "info", f.rel, 1, "seen") for f in u.files] for u in units}


class CrashingChecker(CountingChecker):
    name = "crashing"

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        raise RuntimeError("segfault in the linter")


class SlowChecker(CountingChecker):
    name = "slow"
    timeout = 0.3

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        await asyncio.sleep(30)
        return {}


class WorkerClockChecker(CountingChecker):
    """A checker whose worker's own deadline (the same as the checker's timeout) runs out first."""

    name = "worker-clock"
    timeout = 1.0

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        raise WorkerTimeout("parse worker 1 timed out")


class MissingChecker(CountingChecker):
    name = "missing"

    def version(self) -> str:
        raise CheckerUnavailable("missing-tool not found on PATH")


def tree_with(tmp_path: Path, count: int) -> Path:
    for index in range(count):
        directory = tmp_path / f"stack{index % 3}"
        directory.mkdir(exist_ok=True)
        (directory / f"file{index}.tf").write_text(f"locals {{\n  n = {index}\n}}\n")
    return tmp_path


def check(workspace: Path, checkers: Sequence[Checker], cache: ResultCache, target: Path | None = None) -> CheckReport:
    return asyncio.run(run_checks(workspace, target or workspace, {c.name: c for c in checkers}, cache))


def test_a_crash_a_timeout_and_a_missing_tool_are_skipped_and_the_rest_answers(tmp_path: Path) -> None:
    workspace = tree_with(tmp_path, 3)
    counting = CountingChecker()
    started = time.monotonic()
    report = check(workspace, [counting, CrashingChecker(), SlowChecker(), MissingChecker()], ResultCache(None))
    assert time.monotonic() - started < 5
    assert report.ran == ["counting"]
    assert len(report.findings) == 3
    assert {s.tool: s.reason for s in report.skipped} == {
        "crashing": "crashed: segfault in the linter",
        "slow": "timed out after 0.3 s",
        "missing": "missing-tool not found on PATH",
    }


def test_a_worker_that_times_out_first_is_the_checker_timing_out(tmp_path: Path) -> None:
    """On a loaded machine the worker's clock can run out before the engine's: still a timeout, not a crash."""
    report = check(tree_with(tmp_path, 1), [WorkerClockChecker()], ResultCache(None))
    assert {s.tool: s.reason for s in report.skipped} == {"worker-clock": "timed out after 1 s"}


def test_an_unchanged_tree_is_answered_from_the_cache(tmp_path: Path) -> None:
    workspace = tree_with(tmp_path, 9)
    counting, cache = CountingChecker(), ResultCache(None)
    first = check(workspace, [counting], cache)
    second = check(workspace, [counting], cache)
    assert counting.checked == [[f"stack{i % 3}/file{i}.tf" for i in sorted(range(9), key=lambda i: (i % 3, str(i)))]]
    assert second.findings == first.findings and second.ran == ["counting"]


def test_an_edit_re_checks_only_that_file(tmp_path: Path) -> None:
    workspace = tree_with(tmp_path, 9)
    counting, cache = CountingChecker(), ResultCache(None)
    check(workspace, [counting], cache)
    (workspace / "stack1/file4.tf").write_text("locals {\n  n = 40\n}\n")
    check(workspace, [counting], cache)
    assert counting.checked[1] == ["stack1/file4.tf"]


def test_an_edit_re_checks_only_that_directory_for_directory_checks(tmp_path: Path) -> None:
    workspace = tree_with(tmp_path, 9)
    counting, cache = CountingChecker(per_directory=True), ResultCache(None)
    check(workspace, [counting], cache)
    assert counting.checked == [["stack0", "stack1", "stack2"]]
    (workspace / "stack2/file5.tf").write_text("locals {}\n")
    check(workspace, [counting], cache)
    assert counting.checked[1] == ["stack2"]


def test_a_directory_unit_sees_the_local_modules_it_uses(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "modules/net").mkdir(parents=True)
    (tmp_path / "root/main.tf").write_text('module "net" {\n  source = "../modules/net"\n}\n')
    (tmp_path / "modules/net/main.tf").write_text("locals {}\n")
    counting, cache = CountingChecker(per_directory=True), ResultCache(None)
    check(tmp_path, [counting], cache, target=tmp_path / "root")
    (tmp_path / "modules/net/main.tf").write_text("locals {\n  a = 1\n}\n")
    check(tmp_path, [counting], cache, target=tmp_path / "root")
    assert counting.checked == [["root"], ["root"]]


def test_the_disk_cache_survives_a_restart(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    workspace = tree_with(tmp_path / "ws", 4)
    database = tmp_path / "config" / "cache" / "iac-check.sqlite"
    first_run, second_run = CountingChecker(), CountingChecker()
    first = check(workspace, [first_run], ResultCache(database))
    second = check(workspace, [second_run], ResultCache(database))  # a new process would open the same file
    assert database.is_file()
    assert first_run.checked and not second_run.checked
    assert second.findings == first.findings


def test_a_single_file_target_reports_that_file_only(tmp_path: Path) -> None:
    workspace = tree_with(tmp_path, 6)
    report = check(
        workspace, [CountingChecker(per_directory=True)], ResultCache(None), target=workspace / "stack0/file3.tf"
    )
    assert {f.file for f in report.findings} == {"stack0/file3.tf"}
    assert report.files == 1


def test_a_real_checker_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "bad.tf").write_text('resource "a" "b" {\n  x = \n}\n')
    report = check(tmp_path, [HclSyntaxChecker()], ResultCache(None))
    assert [(f.rule, f.line) for f in report.findings] == [("hcl-syntax", 2)]
