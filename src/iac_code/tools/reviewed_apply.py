"""A bound apply's review (tools/bound_apply.py says which lines are bound): plan first, then ask once,
the plan in the question, then apply exactly the reviewed plan file.

- The line names a plan iac_plan made in this session: that plan is reviewed.
  Otherwise a plan is made as iac_plan would, with the line's flags (`-auto-approve` dropped).
- No changes: nothing is asked and nothing runs.
- The plan cannot be made, the directory is not the workspace's, or the line names a plan file this
  session did not make: asked as today, on the command line, the reason in the question's content.
- Otherwise `infra_change` is asked with the plan (title with the counts, the contract, the summary);
  allowed: the plan file is read once through a descriptor into a fresh private folder (PlanStore.applied_copy),
  hashed as it is copied; the bytes still the reviewed ones (sha256), `<tool> apply -input=false <copy>` runs
  in the plan's directory, through the bash tool's usual path (guarded, that line approved). terraform never
  opens the reviewed file's path, so a plan renamed over it after the check is not what it applies.
- The apply's result says what terraform did by its exit status: "Applied the reviewed plan" only on 0.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iac_code.iac.plans.runner import PlanFailed, PlanRequest, apply_argv, make_plan
from iac_code.iac.plans.store import PlanStore
from iac_code.iac.plans.summary import counts_line, summary_text
from iac_code.tools.base import AccessDetails, ToolContext, ToolError, ToolResult
from iac_code.tools.bound_apply import BoundApply, NotBound, bound_apply
from iac_code.tools.iac_plan import ask_for_plugins, confine_var_files, plugins_words
from iac_code.tools.workspace import relative_to_workspace, resolve_in_workspace

NO_ONE_TO_ASK = "Not run: no one to ask about an infrastructure change."
PLAN_AGAIN = "Nothing was applied. Plan again (run the apply again, or iac_plan) and have the new plan reviewed."
STALE_MARKERS = ("Saved plan is stale", "can no longer be applied")


@dataclass
class ApprovedRun:
    """What the bash tool runs once allowed: `line` in `cwd`; `line` is also the line the user approved."""

    line: str
    cwd: Path
    contract: dict[str, Any] | None = None  # the reviewed plan it applies; None: the line as typed
    skipped: list[str] = field(default_factory=list)  # the line's other commands, not run
    applied: Path | None = None  # the private copy of the reviewed plan the line hands terraform

    def discard(self, store: PlanStore) -> None:
        """The reviewed plan and its copy are no use once the apply ran (or the call ended without it)."""
        if self.contract is not None:
            store.discard(Path(self.contract["planFile"]))
        if self.applied is not None:
            store.discard_copy(self.applied)


async def review(line: str, title: str, ctx: ToolContext, store: PlanStore) -> ApprovedRun | ToolResult:
    """Plan and ask (see the module's doc) about `line`, whose changes include a terraform/tofu apply or
    destroy: what to run, or the call's result when nothing runs. `title`: the call's, for a line asked as
    today."""
    try:
        bound = bound_apply(line)
        directory = _directory(bound, ctx)
        reviewed = await _plan(bound, directory, ctx, store)
    except NotBound as exc:
        return await _as_typed(line, title, ctx, exc)
    if isinstance(reviewed, ToolResult):
        return reviewed
    made_here = bound.plan_file is None
    try:
        return await _ask_with_plan(bound, reviewed, ctx, store, made_here)
    except BaseException:  # a cancelled turn: the plan it made is no use to anyone
        if made_here:
            store.discard(Path(reviewed["planFile"]))
        raise


def _directory(bound: BoundApply, ctx: ToolContext) -> Path:
    try:
        directory = resolve_in_workspace(ctx.roots, bound.directory)
    except ToolError as exc:
        raise NotBound(str(exc)) from None
    if not directory.is_dir():
        raise NotBound(f"there is no directory {bound.directory}")
    return directory


async def _plan(bound: BoundApply, directory: Path, ctx: ToolContext, store: PlanStore) -> dict[str, Any] | ToolResult:
    """The contract of the plan to review: the saved one the line names, or one made now."""
    if bound.plan_file is not None:
        contract = store.contract_for(Path(os.path.normpath(directory / bound.plan_file)))
        if contract is None:
            raise NotBound(f"{bound.plan_file} is not a plan iac_plan made in this session")
        return contract
    if (refusal := await ask_for_plugins(directory, ctx)) is not None:
        rel = relative_to_workspace(ctx.roots, directory)
        return ToolResult(f"Not run: {refusal.rstrip('.')} (planning starts {plugins_words(rel)}).", is_error=True)
    try:
        confine_var_files(ctx.roots, directory, bound.var_files)
    except ToolError as exc:  # never planned: terraform would quote the file's lines in its errors
        raise NotBound(f"a -var-file is outside the workspace ({exc})") from None
    try:
        return (await make_plan(_request(bound, directory), store)).contract
    except PlanFailed as exc:
        raise NotBound(f"the plan could not be made.\n{exc}") from None


async def _ask_with_plan(
    bound: BoundApply, contract: dict[str, Any], ctx: ToolContext, store: PlanStore, made_here: bool
) -> ApprovedRun | ToolResult:
    """No changes: nothing asked. Otherwise asked once, the plan shown; allowed: the apply of that file."""
    text = summary_text(contract)
    if _changes_nothing(contract):
        if made_here:
            store.discard(Path(contract["planFile"]))
        return ToolResult(f"No changes: nothing to apply, nothing ran.\n{text}", raw_output={"plan": contract})
    where = relative_to_workspace(ctx.roots, Path(contract["directory"])).rstrip("/")
    question = f"{contract['tool']} {bound.subcommand} in {where}/: {counts_line(contract['counts'])}"
    if bound.skipped:
        text += "\nNot run (only the reviewed plan is applied): " + "; ".join(bound.skipped)
    refusal = await _ask(ctx, question, AccessDetails(text, contract))
    if refusal is not None:
        if made_here:
            store.discard(Path(contract["planFile"]))
        return ToolResult(refusal, is_error=True)
    applied = await asyncio.to_thread(store.applied_copy, Path(contract["planFile"]), str(contract["sha256"]))
    if applied is None:
        store.discard(Path(contract["planFile"]))
        return ToolResult(
            f"The plan file changed after it was reviewed (its sha256 differs). {PLAN_AGAIN}", is_error=True
        )
    apply_line = shlex.join(apply_argv(contract, applied, options=bound.apply_options))
    return ApprovedRun(apply_line, Path(contract["directory"]), contract, bound.skipped, applied)


def applied_result(result: ToolResult, run: ApprovedRun, output: str) -> ToolResult:
    """The bash result of a reviewed plan's apply, said by terraform's exit status: what was applied first."""
    assert run.contract is not None
    counts = counts_line(run.contract["counts"])
    if result.exit_code == 0:
        head = f"Applied the reviewed plan ({counts}): {run.line}"
        if run.skipped:
            head += "\nNot run (only the reviewed plan was applied): " + "; ".join(run.skipped)
    elif any(marker in output for marker in STALE_MARKERS):
        head = f"terraform called the reviewed plan stale (the state changed since it was made). {PLAN_AGAIN}"
    else:
        ended = f"exited with status {result.exit_code}" if result.exit_code is not None else "did not finish"
        head = (
            f"The apply of the reviewed plan ({counts}) failed: terraform {ended} (its output below says why, "
            f"and what it applied before it stopped, if anything): {run.line}"
        )
    result.is_error = result.is_error or result.exit_code != 0
    result.text = f"{head}\n{result.text}"
    result.raw_output = {"plan": run.contract}
    return result


def _request(bound: BoundApply, directory: Path) -> PlanRequest:
    return PlanRequest(
        directory=directory,
        destroy=bound.destroy,
        refresh=bound.refresh,
        targets=bound.targets,
        replace=bound.replace,
        var_files=bound.var_files,
        variables=bound.variables,
    )


def _changes_nothing(contract: dict[str, Any]) -> bool:
    return not any(contract["counts"].values()) and not contract.get("outputs")


async def _as_typed(line: str, title: str, ctx: ToolContext, why: NotBound) -> ApprovedRun | ToolResult:
    """Asked as today, on the command line, with why it is not bound."""
    reason, _, error = str(why).partition("\n")
    note = f"Not bound to a reviewed plan: {reason.rstrip('.')}. If allowed, the command line runs as typed."
    refusal = await _ask(ctx, title, AccessDetails(f"{note}\n{error}" if error else note))
    if refusal is not None:
        return ToolResult(refusal, is_error=True)
    return ApprovedRun(line, ctx.workspace)


async def _ask(ctx: ToolContext, question: str, details: AccessDetails) -> str | None:
    if ctx.request_access is None:
        return NO_ONE_TO_ASK
    return await ctx.request_access("bash", "infra_change", question, details)
