"""One iac_check run: list and classify the files, pick each checker's units, answer what the cache
knows, run the checkers that have work in parallel (each under its timeout), store and merge.

A checker that is missing, crashes or times out lands in `skipped` with its reason; the others still
answer. Results are cached per unit only when the checker finished, so a failure is retried next time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from iac_code.iac.cache import ResultCache, cache_key
from iac_code.iac.checker import Checker, CheckerUnavailable, RunsWorkspaceCode, Selection, Tree, Unit
from iac_code.iac.checkers.yaml_screen import screen_tree
from iac_code.iac.classify import FileKind, is_candidate
from iac_code.iac.findings import Finding, Skipped
from iac_code.iac.limits import LimitExceeded
from iac_code.iac.sources import load_sources
from iac_code.iac.walk import list_candidate_files
from iac_code.tools.base import RequestAccess

log = logging.getLogger(__name__)

EXCLUDED_SHOWN = 5  # units named in a skip reason before "and N more"
NO_ONE_TO_ASK = "not run: no one can be asked whether code the workspace ships may run"


@dataclass
class CheckReport:
    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files: int = 0

    def raw_output(self) -> dict[str, Any]:
        """The tool call's rawOutput, exactly as the output contract says."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "ran": list(self.ran),
            "skipped": [s.to_dict() for s in self.skipped],
            "files": self.files,
        }


@dataclass
class _Plan:
    checker: Checker
    version: str
    cached: dict[str, list[Finding]]  # unit rel -> findings
    pending: list[Unit]
    keys: dict[str, str]  # unit rel -> cache key
    workspace_code: dict[str, str] = field(default_factory=dict)  # pending unit rel -> the code it would start
    refused: Skipped | None = None  # the units left out because that code may not run


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
    scope = _scope(workspace, target)
    for plan, outcome in zip(plans, outcomes, strict=True):
        if plan.refused is not None:
            report.skipped.append(plan.refused)
            if not plan.pending and not plan.cached:
                continue
        if isinstance(outcome, Skipped):
            report.skipped.append(outcome)
            continue
        report.ran.append(plan.checker.name)
        for unit in plan.pending:
            fresh[plan.keys[unit.rel]] = outcome.get(unit.rel, [])
        for findings in (*plan.cached.values(), *outcome.values()):
            report.findings.extend(f for f in findings if _in_scope(f.file, scope))
    await asyncio.to_thread(cache.put_many, fresh)
    report.findings = sorted(set(report.findings), key=Finding.sort_key)
    report.ran.sort(key=names.index)
    return report


def _tree(workspace: Path, target: Path) -> Tree:
    if target.is_dir():
        return Tree(workspace, load_sources(workspace, list_candidate_files(target)))
    return Tree(workspace, load_sources(workspace, [target] if is_candidate(target.name) else []))


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
    plan = _Plan(checker, version, cached={}, pending=[], keys={})
    for unit in units:
        key = plan.keys[unit.rel] = cache_key(checker.name, version, unit.digest)
        hit = cache.get(key)
        if hit is None:
            plan.pending.append(unit)
            if isinstance(checker, RunsWorkspaceCode) and (code := checker.workspace_code(tree, unit)):
                plan.workspace_code[unit.rel] = code
        else:
            plan.cached[unit.rel] = hit
    return plan


async def _execute(tree: Tree, plan: _Plan, request_access: RequestAccess | None) -> dict[str, list[Finding]] | Skipped:
    if plan.workspace_code:
        await _ask_for_workspace_code(plan, request_access)  # before the timeout starts: the user may take a while
    if not plan.pending:
        return {}
    checker = plan.checker
    try:
        return await asyncio.wait_for(checker.check(tree, plan.pending), checker.timeout)
    except TimeoutError:
        return Skipped(checker.name, f"timed out after {checker.timeout:g} s")
    except (CheckerUnavailable, LimitExceeded) as exc:
        return Skipped(checker.name, str(exc))
    except Exception as exc:  # a checker's bug or its tool's crash must not take the others down
        log.warning("iac_check: %s crashed: %s", checker.name, exc, exc_info=True)
        return Skipped(checker.name, f"crashed: {str(exc).strip()[:500] or type(exc).__name__}")


async def _ask_for_workspace_code(plan: _Plan, request_access: RequestAccess | None) -> None:
    """One question for all the units that would start code the workspace ships; refused, they are left out."""
    checker = plan.checker
    assert isinstance(checker, RunsWorkspaceCode)
    code = _listed(list(dict.fromkeys(plan.workspace_code.values())))
    question = f"iac_check wants to run {checker.command}, which starts {code}"
    if request_access is None:
        refusal: str | None = NO_ONE_TO_ASK
    else:
        refusal = await request_access(f"iac_check:{checker.name}", "workspace_code", question)
    if refusal is None:
        return
    plan.pending = [unit for unit in plan.pending if unit.rel not in plan.workspace_code]
    plan.refused = Skipped(checker.name, f"{refusal.rstrip('.')} ({checker.command} would start {code})")


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:EXCLUDED_SHOWN])
    return f"{shown} and {len(items) - EXCLUDED_SHOWN} more" if len(items) > EXCLUDED_SHOWN else shown


def _excluded(name: str, selection: Selection) -> list[Skipped]:
    by_reason: dict[str, list[str]] = {}
    for rel, reason in selection.excluded:
        by_reason.setdefault(reason, []).append(rel)
    return [Skipped(name, f"{reason}: {_listed(rels)}") for reason, rels in by_reason.items()]


def _scope(workspace: Path, target: Path) -> PurePosixPath | None:
    """The workspace-relative path findings must lie under (None: the whole workspace)."""
    rel = target.relative_to(workspace.resolve()).as_posix()
    return None if rel == "." else PurePosixPath(rel)


def _in_scope(file: str, scope: PurePosixPath | None) -> bool:
    if scope is None:
        return True
    path = PurePosixPath(file)
    return path == scope or scope in path.parents or path in scope.parents
