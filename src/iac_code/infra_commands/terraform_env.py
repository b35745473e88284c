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

from iac_code.infra_commands.shell_syntax import Word

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


def variable_names(args: Sequence[str], value_options: frozenset[str] = frozenset()) -> tuple[str, str]:
    """The two variables this command line reads (`TF_CLI_ARGS`, `TF_CLI_ARGS_state_rm`)."""
    return CLI_ARGS, _variable(subcommand(_without_values(list(args), value_options)))


def _variable(named: str) -> str:
    return f"{CLI_ARGS}_{named.replace('-', '_').replace(' ', '_')}"


def with_environment(args: Sequence[str], env: Mapping[str, str]) -> list[str] | None:
    """The arguments (after the program name) terraform runs with under `env`; None when it refuses the
    variables' text. `-chdir=DIR`, when given, comes first."""
    folded = with_environment_words([Word(arg) for arg in args], env)
    return None if folded is None else [word.text for word in folded]


def with_environment_words(
    args: Sequence[Word], env: Mapping[str, str], value_options: frozenset[str] = frozenset()
) -> list[Word] | None:
    """with_environment on a command's words (a word computed at run time stays one). `value_options`:
    options of a driver before the subcommand whose value is no subcommand (terragrunt's `--working-dir d`)."""
    chdir, rest = _without_chdir(args)
    named = subcommand(_without_values([word.text for word in rest], value_options))
    folded = list(rest)
    for name in (CLI_ARGS, _variable(named)):
        value = env.get(name, "")
        if not value:
            continue
        extra = split_arguments(value)
        if extra is None:
            return None
        folded = _inserted(folded, named.rsplit(" ", 1)[-1], [Word(text) for text in extra])
    return [*chdir, *folded]


def _without_values(args: list[str], value_options: frozenset[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for arg in args:
        if not skip:
            kept.append(arg)
        skip = not skip and arg in value_options
    return kept


def _inserted(args: list[Word], search: str, extra: list[Word]) -> list[Word]:
    texts = [word.text for word in args]
    index = texts.index(search) + 1 if search in texts else 0
    return [*args[:index], *extra, *args[index:]]


def _without_chdir(args: Sequence[Word]) -> tuple[list[Word], list[Word]]:
    """Terraform takes the last `-chdir=DIR` among the options before the first operand out of the arguments."""
    position = None
    for index, arg in enumerate(args):
        if not arg.text.startswith("-"):
            break
        if arg.text.startswith("-chdir="):
            position = index
    if position is None:
        return [], list(args)
    return [args[position]], [*args[:position], *args[position + 1 :]]
