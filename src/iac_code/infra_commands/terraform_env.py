"""The arguments terraform takes from its environment: TF_CLI_ARGS and TF_CLI_ARGS_<subcommand>.

Terraform splits each value like a shell line (quotes and backslashes; `#` and `$` stay text; an unquoted
`;`, `&`, `|`, `<` or `>` ends it; an unclosed quote is an error and nothing runs) and inserts the words
right after the first argument equal to the last word of the subcommand the command line names, or before
everything when it names none: `TF_CLI_ARGS="apply -auto-approve" terraform` applies, and
`TF_CLI_ARGS_state="rm x" terraform state` runs `state rm x`. Both variables are placed by the subcommand
of the command line as given, TF_CLI_ARGS first; `-chdir=DIR` is taken out before. Checked against
terraform 1.11 (TF_LOG=info logs the "CLI command args" it ends with). OpenTofu reads the same variables.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

CLI_ARGS = "TF_CLI_ARGS"
SHELL_OPERATORS = ";&|<>"
# the subcommands terraform (mitchellh/cli) knows as two words: `state rm` is one subcommand, `state` another
NESTED_SUBCOMMANDS = {
    "state": frozenset({"list", "mv", "pull", "push", "replace-provider", "rm", "show", "identities"}),
    "workspace": frozenset({"list", "select", "show", "new", "delete"}),
    "env": frozenset({"list", "select", "new", "delete"}),
    "providers": frozenset({"lock", "mirror", "schema"}),
    "metadata": frozenset({"functions"}),
}
HELP_FLAGS = frozenset({"-h", "-help", "--help"})
VERSION_FLAGS = frozenset({"-v", "-version", "--version"})


def split_arguments(value: str) -> list[str] | None:
    """The words terraform makes of a TF_CLI_ARGS value; None when it refuses it (an unclosed quote)."""
    lexer = shlex.shlex(value, posix=True, punctuation_chars=SHELL_OPERATORS)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    try:
        for word in lexer:
            if word and not word.strip(SHELL_OPERATORS):
                break
            words.append(word)
    except ValueError:
        return None
    return words


def subcommand(args: Sequence[str]) -> str:
    """The subcommand of terraform's arguments (after -chdir is taken out): "" when none, "state rm" nested."""
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg in HELP_FLAGS or arg in VERSION_FLAGS or not arg or arg.startswith("-"):
            continue
        following = args[index + 1] if index + 1 < len(args) else ""
        if following in NESTED_SUBCOMMANDS.get(arg, ()):
            return f"{arg} {following}"
        return arg
    return ""


def variable_names(args: Sequence[str]) -> tuple[str, str]:
    """The two variables this command line reads (`TF_CLI_ARGS`, `TF_CLI_ARGS_state_rm`)."""
    return CLI_ARGS, f"{CLI_ARGS}_{subcommand(_without_chdir(args)[1]).replace('-', '_').replace(' ', '_')}"


def with_environment(args: Sequence[str], env: Mapping[str, str]) -> list[str] | None:
    """The arguments (after the program name) terraform runs with under `env`; None when it refuses the
    variables' text. `-chdir=DIR`, when given, comes first."""
    chdir, rest = _without_chdir(args)
    named = subcommand(rest)
    folded = list(rest)
    for name in variable_names(args):
        value = env.get(name, "")
        if not value:
            continue
        extra = split_arguments(value)
        if extra is None:
            return None
        folded = _inserted(folded, named.rsplit(" ", 1)[-1], extra)
    return [*chdir, *folded]


def _inserted(args: list[str], search: str, extra: list[str]) -> list[str]:
    index = args.index(search) + 1 if search in args else 0
    return [*args[:index], *extra, *args[index:]]


def _without_chdir(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """Terraform takes the last `-chdir=DIR` among the options before the first operand out of the arguments."""
    position = None
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            break
        if arg.startswith("-chdir="):
            position = index
    if position is None:
        return [], list(args)
    return [args[position]], [*args[:position], *args[position + 1 :]]
