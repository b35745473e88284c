"""The infrastructure guard: shims for the infrastructure CLIs first on PATH of every command the agent runs
(and, where Linux allows, bound over the real binaries in a mount namespace of the command's own), asking
the agent over a private Unix socket whether each exact argv may run. See README.md."""

from iac_code.guard.approvals import LineApproval
from iac_code.guard.calls import AskUser, BashCallDecision, refuse_changes
from iac_code.guard.channel import ShimRequest
from iac_code.guard.shim import GUARD_TOKEN
from iac_code.guard.shims import Guard, guard_checks_commands, guard_status, process_guard

__all__ = [
    "GUARD_TOKEN",
    "AskUser",
    "BashCallDecision",
    "Guard",
    "LineApproval",
    "ShimRequest",
    "guard_checks_commands",
    "guard_status",
    "process_guard",
    "refuse_changes",
]
