"""The start-up's one call that puts the guard in front of the checks' commands (cli.py, before it serves or
runs a turn). The bash tool guards each of its calls itself (tools/shell.py); an import installs nothing."""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.system.processes import use_guard


def guard_checks_commands() -> None:
    """From now on, the commands made with system.processes.command_environment (the checks') are guarded:
    a change is refused without asking, under one token for the process."""
    use_guard(_guard_check_environment)


def _guard_check_environment(env: dict[str, str], unreadable: Sequence[str], kept: Sequence[str]) -> None:
    # The guard's machinery (its approvals, the CLIs' grammars: ~50 ms of imports) loads with the first command,
    # not before: on stdio the start-up answers the editor while what serving needs loads in a thread.
    from iac_code.guard.shims import guard_check_environment

    guard_check_environment(env, unreadable, kept)
