"""The bash rule: whether a shell command line changes real infrastructure, and so is asked every time.

The bash tool (tools/shell.py) asks it for each command line; the guard's shims ask `changes_argv` for each
program about to run, and `approval_covers` whether the line the user approved already covers it. It reads
commands and knows nothing of tools or of the checkers in iac/. `rule.py` walks a line's commands,
`shell_syntax.py` reads the line as bash would, `wrappers.py` unwraps the programs that run others,
`clis.py` and `cloud_clis.py` know which subcommands of each infrastructure CLI change things.
`is_read_only` is the other way round: an allow-list of each CLI's read-only forms (read_only.py), for
handing a run the user's cloud credentials without asking.
"""

from iac_code.infra_commands.argv import GUARDED_PROGRAMS, approval_covers, changes_argv
from iac_code.infra_commands.cli_grammar import ReadForm
from iac_code.infra_commands.read_only import is_read_only, read_only_form
from iac_code.infra_commands.rule import is_infrastructure_change

__all__ = [
    "GUARDED_PROGRAMS",
    "ReadForm",
    "approval_covers",
    "changes_argv",
    "is_infrastructure_change",
    "is_read_only",
    "read_only_form",
]
