"""A bound apply's review (tools/bound_apply.py says which lines are bound): plan first, then ask once,
the plan in the question, then apply exactly the reviewed plan file.

- The line names a plan this session made (iac_plan, or an earlier bound apply): that plan is reviewed.
  Otherwise a plan is made as iac_plan would, with the line's flags (`-auto-approve` dropped).
- No changes: nothing is asked and nothing runs.
- The plan cannot be made, the directory is not the workspace's, or the line names a plan file this
  session did not make: asked as today, on the command line, the reason in the question's content.
- Otherwise `infra_change` is asked with the plan (title with the counts, the contract, the summary);
  allowed and the file still the reviewed one (sha256): `<tool> apply -input=false <planFile>` runs in
  the plan's directory, through the bash tool's usual path (guarded, that line approved).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iac_code.iac.plans.runner import PlanFailed, PlanRequest, apply_argv, make_plan, still_reviewed
from iac_code.iac.plans.store import PlanStore
from iac_code.iac.plans.summary import counts_line, summary_text
from iac_code.tools.base import AccessDetails, ToolContext, ToolError, ToolResult
from iac_code.tools.bound_apply import BoundApply
from iac_code.tools.iac_plan import ask_for_plugins, plugins_words
from iac_code.tools.workspace import relative_to_workspace, resolve_in_workspace

NOT_BOUND = "Not bound to a reviewed plan: {why}. The command line runs as typed if allowed."
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


async def review(
    bound: BoundApply | None, line: str, title: str, ctx: ToolContext, store: PlanStore
) -> ApprovedRun | ToolResult:
    """Plan and ask (see the module's doc): what to run, or the call's result when nothing runs. `bound` None:
    an infrastructure change the binding does not cover, asked as today with that said."""
    if bound is None:
        return await _as_typed(
            line,
            title,
            ctx,
            "the line runs other commands beside one apply, or flags or words that cannot be carried into a plan",
        )
    try:
        directory = resolve_in_workspace(ctx.workspace, bound.directory)
    except ToolError as exc:
        return await _as_typed(line, title, ctx, str(exc))
    if not directory.is_dir():
        return await _as_typed(line, title, ctx, f"no directory {bound.directory}")
    made_here = bound.plan_file is None
    if bound.plan_file is not None:
        contract = store.contract_for((directory / bound.plan_file).resolve())
        if contract is None:
            return await _as_typed(line, title, ctx, f"{bound.plan_file} is not a plan this session made")
    else:
        if (refusal := await ask_for_plugins(directory, ctx)) is not None:
            rel = relative_to_workspace(ctx.workspace, directory)
            return ToolResult(f"Not run: {refusal.rstrip('.')} (planning starts {plugins_words(rel)}).", is_error=True)
        try:
            contract = (await make_plan(_request(bound, directory), store)).contract
        except PlanFailed as exc:
            return await _as_typed(line, title, ctx, f"the plan could not be made.\n{exc}")
    text = summary_text(contract)
    if _changes_nothing(contract):
        if made_here:
            store.discard(Path(contract["planFile"]))
        return ToolResult(f"No changes: nothing to apply, nothing ran.\n{text}", raw_output={"plan": contract})
    where = relative_to_workspace(ctx.workspace, Path(contract["directory"]))
    question = f"{contract['tool']} {bound.subcommand} in {where.rstrip('/')}/: {counts_line(contract['counts'])}"
    if bound.skipped:
        text += "\nNot run (only the reviewed plan is applied): " + "; ".join(bound.skipped)
    refusal = await _ask(ctx, question, AccessDetails(text, contract))
    if refusal is not None:
        if made_here:
            store.discard(Path(contract["planFile"]))
        return ToolResult(refusal, is_error=True)
    if not still_reviewed(contract):
        store.discard(Path(contract["planFile"]))
        return ToolResult(
            f"The plan file changed after it was reviewed (its sha256 differs). {PLAN_AGAIN}", is_error=True
        )
    apply_line = shlex.join(apply_argv(contract, options=bound.apply_options))
    return ApprovedRun(apply_line, Path(contract["directory"]), contract, bound.skipped)


def applied_result(result: ToolResult, run: ApprovedRun, output: str, store: PlanStore) -> ToolResult:
    """The bash result of a reviewed plan's apply: what was applied first; the plan file discarded."""
    assert run.contract is not None
    store.discard(Path(run.contract["planFile"]))
    head = f"Applied the reviewed plan ({counts_line(run.contract['counts'])}): {run.line}"
    if run.skipped:
        head += "\nNot run (only the reviewed plan was applied): " + "; ".join(run.skipped)
    if any(marker in output for marker in STALE_MARKERS):
        head = f"terraform called the reviewed plan stale (the state changed since it was made). {PLAN_AGAIN}"
        result.is_error = True
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


async def _as_typed(line: str, title: str, ctx: ToolContext, why: str) -> ApprovedRun | ToolResult:
    """Asked as today, on the command line, with why it is not bound."""
    refusal = await _ask(ctx, title, AccessDetails(NOT_BOUND.format(why=why)))
    if refusal is not None:
        return ToolResult(refusal, is_error=True)
    return ApprovedRun(line, ctx.workspace)


async def _ask(ctx: ToolContext, question: str, details: AccessDetails) -> str | None:
    if ctx.request_access is None:
        return NO_ONE_TO_ASK
    return await ctx.request_access("bash", "infra_change", question, details)
