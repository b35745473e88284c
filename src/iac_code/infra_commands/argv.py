"""The same rule on a command that is about to run: its exact argv, as a shim on PATH sees it (guard/).

No shell is left to read: the words are final. `changes_argv` says whether running them changes real
infrastructure; `approval_covers` says whether a user who approved a command *line* (the bash call's
visible question) already approved this run of one of its programs, so that it is not asked twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.infra_commands.clis import CHANGE_CHECKS
from iac_code.infra_commands.rule import program_name
from iac_code.infra_commands.shell_syntax import Word

# The programs a shim stands in for: every CLI whose subcommands can change real infrastructure.
GUARDED_PROGRAMS = frozenset(CHANGE_CHECKS)


def changes_argv(argv: Sequence[str]) -> bool:
    """Whether running `argv` (argv[0] the program, as invoked or by base name) changes infrastructure."""
    if not argv:
        return False
    check = CHANGE_CHECKS.get(program_name(argv[0]))
    return check is not None and check([Word(arg) for arg in argv[1:]])


def approval_covers(line: str, argv: Sequence[str]) -> bool:
    """Whether approving the command line `line` covers running `argv` during that command."""
    return bool(argv) and changes_argv(argv) and " ".join(argv[1:]) in line and program_name(argv[0]) in line
