"""The bash tool: a command run where the call's `ctx.io` runs commands (local_shell.py: its own process
group under the reaper; or a client terminal when the editor has them), its output bounded; infrastructure
changes judged apart: the visible line before the call (infra_commands/), and each infrastructure CLI the
command actually runs, by the guard's shims (guard/)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from iac_code.cloud_credentials import credential_paths
from iac_code.guard.approvals import LineApproval
from iac_code.guard.calls import AskUser, BashCallDecision
from iac_code.guard.shim import GUARD_TOKEN
from iac_code.guard.shims import process_guard
from iac_code.iac.plans.store import PlanStore
from iac_code.infra_commands import is_infrastructure_change
from iac_code.system.processes import (
    command_environment,
    unreadable_paths,
)
from iac_code.tools.base import (
    MAX_OUTPUT_CHARS,
    Access,
    AccessDetails,
    Category,
    Kind,
    Terminal,
    ToolContext,
    ToolResult,
    integer_arg,
    required_text,
)
from iac_code.tools.bound_apply import applies_terraform
from iac_code.tools.iac_plan import Unreadable, denied_paths
from iac_code.tools.local_shell import CommandRun
from iac_code.tools.reviewed_apply import ApprovedRun, applied_result, review
from iac_code.tools.workspace import shorten

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
GUARD_TOKEN_NAME = "the guard's token"


class BashTool:
    name = "bash"
    description = (
        "Run a shell command with bash in the workspace directory and return its output (stdout and "
        "stderr interleaved) and exit code. No stdin and no terminal: commands must not prompt "
        "(use -auto-approve / -input=false style flags). "
        "A `terraform apply`/`destroy` (or tofu) line is planned first and the user reviews that plan: what runs is "
        "the reviewed plan, not the line as typed, and the line's other commands (init, fmt…) do not run. "
        f"Default timeout {DEFAULT_TIMEOUT} s, at most {MAX_TIMEOUT} s; the command and all its child "
        f"processes are killed on timeout. Long output keeps its first and last {MAX_OUTPUT_CHARS // 2:,} bytes."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line to run."},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT}).",
            },
            "description": {
                "type": "string",
                "description": "A few words saying what the command does, e.g. 'Validate the Terraform config'.",
            },
        },
        "required": ["command"],
    }
    category: Category = "execute"
    kind: Kind = "execute"

    def __init__(self, plans: PlanStore | None = None, unreadable: Unreadable | None = None) -> None:
        """`plans`: the session's saved plans (iac_plan's), which an apply is bound to (None: a temporary store);
        `unreadable`: the paths the session's Read rules deny, hidden from the plan a bound apply makes."""
        self.plans = plans if plans is not None else PlanStore(None)
        self.unreadable = unreadable

    def access(self, args: dict[str, Any]) -> Access:
        command = args.get("command")
        # A command that changes real infrastructure is asked every time, whatever was allowed before.
        # A Terraform/OpenTofu apply is asked by run() itself, once its plan is made (reviewed_apply.py).
        # (A missing or non-text command is "execute": run() refuses it before anything runs.)
        if isinstance(command, str) and is_infrastructure_change(command):
            return "infra_plan" if applies_terraform(command) else "infra_change"
        return "unguarded_execute" if credentials_exposed() else "execute"

    def title(self, args: dict[str, Any]) -> str:
        description = str(args.get("description") or "").strip()
        if description:
            return shorten(description)
        return f"Run {shorten(str(args.get('command', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Through `ctx.io`: a local process, or the editor's terminal, shown on the call while it runs."""
        command = required_text(args, "command", blank_ok=False)
        timeout = integer_arg(args, "timeout", DEFAULT_TIMEOUT, low=1, high=MAX_TIMEOUT)

        async def show_terminal(terminal_id: str) -> None:
            if ctx.progress is not None:
                await ctx.progress(Terminal(terminal_id))

        access = self.access(args)
        approved = ApprovedRun(command, ctx.workspace) if access == "infra_change" else None
        if access == "infra_plan":
            with unreadable_paths(await denied_paths(self.unreadable)):
                reviewed = await review(command, self.title(args), ctx, self.plans)
            if isinstance(reviewed, ToolResult):
                return reviewed
            approved = reviewed
        line, cwd = (approved.line, approved.cwd) if approved is not None else (command, ctx.workspace)
        env = command_environment(guarded=False)  # guarded below, for this call
        # The user approved `line` as it runs here, in `cwd` with `env`: not elsewhere, nor under another environment.
        approval = LineApproval(line, cwd, env) if approved is not None else None
        decision = BashCallDecision(approval, _asker(ctx), asyncio.get_running_loop(), patience=timeout)
        guard = await asyncio.to_thread(process_guard)  # the first call makes it, and probes namespaces
        # The agent's state is out of the command's reach (its namespace), but for a reviewed plan's private copy.
        kept = [str(approved.applied.parent)] if approved is not None and approved.applied is not None else []
        with guard.guarding(env, decision, kept) if guard is not None else contextlib.nullcontext():
            try:
                run = await ctx.io.run(line, cwd=cwd, env=env, timeout=timeout, on_terminal=show_terminal)
            finally:
                decision.close()
                if approved is not None:
                    approved.discard(self.plans)
        if decision.interruption is not None:  # the user cancelled the turn at the shim's question
            raise decision.interruption
        result = bash_result(run, timeout)
        if token := env.get(GUARD_TOKEN):  # `env` would print it: redacted with the session's secrets
            result.secrets[GUARD_TOKEN_NAME] = token
        if approved is not None and approved.contract is not None:
            result = applied_result(result, approved, run.output)
        if run.terminal_id is not None:  # the editor keeps showing a released terminal's output
            result.terminal_id = run.terminal_id
        return result


def credentials_exposed() -> bool:
    """Whether a command here could read the cloud credential files: they exist, and the guard cannot hide
    them (no mount namespaces). Files first: only then is the guard made (its namespaces probed, once)."""
    if not credential_paths():
        return False
    guard = process_guard()
    return guard is not None and not guard.namespaces.usable


def _asker(ctx: ToolContext) -> AskUser | None:
    """How the guard asks about a change the call's line did not show: as the visible line would be."""
    request_access = ctx.request_access
    if request_access is None:
        return None

    async def ask(command: str, shown: str) -> str | None:  # the question is the command about to run
        return await request_access("bash", "infra_change", command, AccessDetails(shown, command=command))

    return ask


def bash_result(run: CommandRun, timeout: float) -> ToolResult:
    """What the model reads: the output, how the command ended, and what the editor failed to do
    (an error unless it exited 0 and the editor did its part)."""
    if run.timed_out:
        killed = "." if run.problem else " and was killed."
        text = f"{run.output}\nCommand timed out after {timeout} s{killed}".lstrip()
    else:
        status = f"Killed by {run.signal}" if run.signal else f"Exit code: {run.exit_code}"
        text = f"{run.output.rstrip()}\n{status}" if run.output.strip() else f"(no output)\n{status}"
    if run.problem:
        return ToolResult(f"{text}\n{run.problem}", is_error=True, exit_code=run.exit_code)
    return ToolResult(text, is_error=run.timed_out or run.exit_code != 0, exit_code=run.exit_code)
