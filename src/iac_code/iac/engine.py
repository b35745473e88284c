"""One iac_check run: list and classify the files, pick each checker's units, answer what the cache
knows, run the checkers that have work in parallel (each under its timeout), store and merge.

A checker that is missing, crashes or times out lands in `skipped` with its reason; the others still
answer. A crash or timeout is cached for the units it was given like a result (see cache.py), so an
unchanged costly input is not paid again; an edit re-runs it. A missing tool is never cached.

What the check could not look at is reported: files beyond the walk's limit, over the size cap, or unsafe
to read (a symlink, a FIFO, a device); an unsafe file also gets an `unsafe-file` finding, as does each
file that kept its directory from the programs that read whole directories.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from iac_code.iac.cache import ResultCache, cache_key
from iac_code.iac.checker import Checker, CheckerUnavailable, RunsWorkspaceCode, Selection, Tree, Unit
from iac_code.iac.checkers.yaml_screen import screen_tree
from iac_code.iac.classify import FileKind, is_candidate
from iac_code.iac.findings import Finding, Skipped
from iac_code.iac.limits import LimitExceeded
from iac_code.iac.sources import LeftOut, load_sources
from iac_code.iac.walk import walk_candidates

# How a check asks, mid-call, to start code the workspace ships: (subject, "workspace_code", question) →
# None to go ahead, else why not. The tool passes its ToolContext.request_access (tools/base.py), which
# takes any access; the checkers sit below the tools and name only the one they ask for.
RequestAccess = Callable[[str, Literal["workspace_code"], str], Awaitable[str | None]]

log = logging.getLogger(__name__)

EXCLUDED_SHOWN = 5  # units named in a skip reason before "and N more"
UNSAFE_RULE = "unsafe-file"
WHOLE_DIRECTORY_PROGRAMS = "terraform validate, tflint and checkov"
NO_ONE_TO_ASK = "not run: no one can be asked whether code the workspace ships may run"


@dataclass
class CheckReport:
    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # why -> how many files (only the non-zero ones)

    def raw_output(self) -> dict[str, Any]:
        """The tool call's rawOutput, as the output contract says (`leftOut` only when files were)."""
        raw: dict[str, Any] = {
            "findings": [f.to_dict() for f in self.findings],
            "ran": list(self.ran),
            "skipped": [s.to_dict() for s in self.skipped],
            "files": self.files,
        }
        if self.left_out:
            raw["leftOut"] = dict(self.left_out)
        return raw


@dataclass
class _Plan:
    checker: Checker
    version: str
    cached: dict[str, list[Finding]]  # unit rel -> findings
    failed: dict[str, str]  # unit rel -> why the checker failed on it in an earlier, remembered run
    pending: list[Unit]
    keys: dict[str, str]  # unit rel -> cache key
    workspace_code: dict[str, str] = field(default_factory=dict)  # pending unit rel -> the code it would start
    refused: Skipped | None = None  # the units left out because that code may not run


@dataclass(frozen=True)
class _Failure:
    skipped: Skipped
    remembered: bool  # a crash or timeout (cached); not a missing tool


async def run_checks(
    workspace: Path,
    target: Path,
    checkers: Mapping[str, Checker],
    cache: ResultCache,
    requested: Sequence[str] | None = None,
    request_access: RequestAccess | None = None,
) -> CheckReport:
    """Check `target` (a file or directory inside `workspace`) with `checkers` (all, or those `requested`).
    A checker that would start code the workspace ships asks `request_access` first (refused without it)."""
    tree = await asyncio.to_thread(_tree, workspace, target)
    await screen_tree(tree)  # YAML alias bombs judged in a worker now, so that select() never waits for one
    report = CheckReport(files=sum(1 for s in tree.sources if s.kind is not FileKind.OTHER))
    names = list(requested) if requested else list(checkers)
    plans = await asyncio.to_thread(_plan_all, tree, [checkers[n] for n in names], cache, report, bool(requested))
    outcomes = await asyncio.gather(*(_execute(tree, plan, request_access) for plan in plans))
    fresh: dict[str, list[Finding]] = {}
    failures: dict[str, str] = {}
    scope = _scope(workspace, target)
    for plan, outcome in zip(plans, outcomes, strict=True):
        report.skipped.extend(_remembered(plan))
        if plan.refused is not None:
            report.skipped.append(plan.refused)
        if isinstance(outcome, _Failure):
            report.skipped.append(outcome.skipped)
            if outcome.remembered:
                failures.update((plan.keys[unit.rel], outcome.skipped.reason) for unit in plan.pending)
            continue
        if plan.pending or plan.cached:
            report.ran.append(plan.checker.name)
        for unit in plan.pending:
            fresh[plan.keys[unit.rel]] = outcome.get(unit.rel, [])
        for findings in (*plan.cached.values(), *outcome.values()):
            report.findings.extend(f for f in findings if _in_scope(f.file, scope))
    report.findings.extend(f for f in _unsafe_findings(tree) if _in_scope(f.file, scope))
    report.left_out = _left_out_counts(tree.left_out)
    await asyncio.to_thread(cache.put_many, fresh)
    await asyncio.to_thread(cache.put_failures, failures)
    report.findings = sorted(set(report.findings), key=Finding.sort_key)
    report.ran.sort(key=names.index)
    return report


def _tree(workspace: Path, target: Path) -> Tree:
    left_out = LeftOut()
    if target.is_dir():
        candidates = walk_candidates(target)
        left_out.over_file_limit = candidates.beyond_limit
        return Tree(workspace, load_sources(workspace, candidates.paths, left_out), left_out)
    paths = [target] if is_candidate(target.name) else []
    return Tree(workspace, load_sources(workspace, paths, left_out), left_out)


def _plan_all(
    tree: Tree, checkers: list[Checker], cache: ResultCache, report: CheckReport, explicit: bool
) -> list[_Plan]:
    plans = []
    for checker in checkers:
        try:
            selection = checker.select(tree)
            version = checker.version() if selection.units or selection.excluded else ""
        except CheckerUnavailable as exc:
            report.skipped.append(Skipped(checker.name, str(exc)))
            continue
        except Exception as exc:
            log.exception("iac_check: %s failed while planning", checker.name)
            report.skipped.append(Skipped(checker.name, f"crashed: {exc}"))
            continue
        if selection.excluded:
            report.skipped.extend(_excluded(checker.name, selection))
        if not selection.units:
            if explicit and not selection.excluded:
                report.skipped.append(Skipped(checker.name, "nothing to check: no files of the kinds it checks"))
            continue
        plans.append(_plan(tree, checker, version, selection.units, cache))
    return plans


def _plan(tree: Tree, checker: Checker, version: str, units: list[Unit], cache: ResultCache) -> _Plan:
    plan = _Plan(checker, version, cached={}, failed={}, pending=[], keys={})
    for unit in units:
        key = plan.keys[unit.rel] = cache_key(checker.name, version, unit.digest)
        hit = cache.get(key)
        if hit is not None:
            plan.cached[unit.rel] = hit
        elif (failure := cache.failure(key)) is not None:
            plan.failed[unit.rel] = failure
        else:
            plan.pending.append(unit)
            if isinstance(checker, RunsWorkspaceCode) and (code := checker.workspace_code(tree, unit)):
                plan.workspace_code[unit.rel] = code
    return plan


async def _execute(
    tree: Tree, plan: _Plan, request_access: RequestAccess | None
) -> dict[str, list[Finding]] | _Failure:
    if plan.workspace_code:
        await _ask_for_workspace_code(plan, request_access)  # before the timeout starts: the user may take a while
    if not plan.pending:
        return {}
    checker = plan.checker
    try:
        async with asyncio.timeout(checker.timeout):
            return await checker.check(tree, plan.pending)
    except TimeoutError:
        return _Failure(Skipped(checker.name, f"timed out after {checker.timeout:g} s"), remembered=True)
    except LimitExceeded as exc:  # a costly input, like a timeout: paid once
        return _Failure(Skipped(checker.name, str(exc)), remembered=True)
    except CheckerUnavailable as exc:
        return _Failure(Skipped(checker.name, str(exc)), remembered=False)
    except Exception as exc:  # a checker's bug or its tool's crash must not take the others down
        log.warning("iac_check: %s crashed: %s", checker.name, exc, exc_info=True)
        reason = f"crashed: {str(exc).strip()[:500] or type(exc).__name__}"
        return _Failure(Skipped(checker.name, reason), remembered=True)


def _remembered(plan: _Plan) -> list[Skipped]:
    """The failures answered from the cache, one entry per reason, naming the units."""
    by_reason: dict[str, list[str]] = {}
    for rel, reason in plan.failed.items():
        by_reason.setdefault(reason, []).append(rel)
    return [
        Skipped(plan.checker.name, f"{reason}, remembered from an earlier run on unchanged files: {_named(rels)}")
        for reason, rels in by_reason.items()
    ]


def _unsafe_findings(tree: Tree) -> list[Finding]:
    """One `unsafe-file` warning per file not read because of what it is (a symlink, a FIFO, a device...)."""
    held_back = {file: directory for directory, problems in tree.unsafe_dirs().items() for file, _ in problems}
    findings = []
    for rel, reason in tree.left_out.unsafe.items():
        message = f"not checked: {reason}"
        if rel in held_back:
            message += f"; so {WHOLE_DIRECTORY_PROGRAMS} do not check its directory {held_back[rel]}"
        findings.append(Finding("iac_check", UNSAFE_RULE, "warning", rel, None, message))
    return findings


def _left_out_counts(left_out: LeftOut) -> dict[str, int]:
    counts = {
        "overFileLimit": left_out.over_file_limit,
        "overSizeCap": len(left_out.too_large - left_out.unsafe.keys()),
        "unsafe": len(left_out.unsafe),
    }
    return {why: count for why, count in counts.items() if count}


async def _ask_for_workspace_code(plan: _Plan, request_access: RequestAccess | None) -> None:
    """One question for all the units that would start code the workspace ships; refused, they are left out."""
    checker = plan.checker
    assert isinstance(checker, RunsWorkspaceCode)
    code = _named(list(dict.fromkeys(plan.workspace_code.values())))
    question = f"iac_check wants to run {checker.command}, which starts {code}"
    if request_access is None:
        refusal: str | None = NO_ONE_TO_ASK
    else:
        refusal = await request_access(f"iac_check:{checker.name}", "workspace_code", question)
    if refusal is None:
        return
    plan.pending = [unit for unit in plan.pending if unit.rel not in plan.workspace_code]
    plan.refused = Skipped(checker.name, f"{refusal.rstrip('.')} ({checker.command} would start {code})")


def _excluded(name: str, selection: Selection) -> list[Skipped]:
    by_reason: dict[str, list[str]] = {}
    for rel, reason in selection.excluded:
        by_reason.setdefault(reason, []).append(rel)
    return [Skipped(name, f"{reason}: {_named(rels)}") for reason, rels in by_reason.items()]


def _named(rels: list[str]) -> str:
    more = f" and {len(rels) - EXCLUDED_SHOWN} more" if len(rels) > EXCLUDED_SHOWN else ""
    return ", ".join(rels[:EXCLUDED_SHOWN]) + more


def _scope(workspace: Path, target: Path) -> PurePosixPath | None:
    """The workspace-relative path findings must lie under (None: the whole workspace)."""
    rel = target.relative_to(workspace.resolve()).as_posix()
    return None if rel == "." else PurePosixPath(rel)


def _in_scope(file: str, scope: PurePosixPath | None) -> bool:
    if scope is None:
        return True
    path = PurePosixPath(file)
    return path == scope or scope in path.parents or path in scope.parents
