"""The start-up's one call that puts the guard in front of the checks' commands (cli.py, before it serves or
runs a turn). The bash tool guards each of its calls itself (tools/shell.py); an import installs nothing."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from iac_code.system.processes import use_guard

if TYPE_CHECKING:
    from iac_code.guard.channel import Decide


def guard_checks_commands(answer: Decide) -> None:
    """From now on, the commands made with system.processes.command_environment (the checks') are guarded, each
    run their shims ask about answered by `answer` (the policy's: agent/policy.answer_check_command), under
    one token for the process."""
    use_guard(functools.partial(_guard_check_environment, answer))


def _guard_check_environment(
    answer: Decide, env: dict[str, str], unreadable: Sequence[str], kept: Sequence[str]
) -> None:
    # The guard's machinery (its approvals, the CLIs' grammars: ~50 ms of imports) loads with the first command,
    # not before: on stdio the start-up answers the editor while what serving needs loads in a thread.
    from iac_code.guard.shims import guard_check_environment

    guard_check_environment(answer, env, unreadable, kept)
