"""Which bash lines are a Terraform/OpenTofu apply that can be bound to a reviewed plan, and with what.

A line is bound when its only changing command is one `terraform`/`tofu` `apply` or `destroy`, run as
itself (no wrapper, no variable assignment before it), with flags this module understands, and every other
command of the line is one of a few harmless ones: `cd DIR` and terraform's `init`, `fmt`, `validate`,
`version`, `output`, `show`, `providers`, joined by `&&`, `;` or newlines. No word may be computed at run
time (`$X`, a glob, `~`). Anything else (a pipe, `||`, a redirection, a subshell, an unknown flag, a second
change) is not bound (NotBound says why): the bash tool asks about it as the command line it is, saying why
(tools/reviewed_apply.py).

Only the apply is bound: the other commands of the line are not run (the reviewed plan is applied alone),
and the tool's result says so.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from iac_code.infra_commands.rule import changing_commands, program_name
from iac_code.infra_commands.shell_syntax import ShellSyntaxError, parse_commands
from iac_code.infra_commands.wrappers import ASSIGNMENT

TOOLS = frozenset({"terraform", "tofu"})
HARMLESS_SUBCOMMANDS = frozenset({"init", "fmt", "validate", "version", "output", "show", "providers"})
SEPARATORS = frozenset({"&&", ";"})
# Flags of apply that say nothing about what is applied, carried to the apply of the saved plan.
APPLY_OPTIONS = frozenset({"-lock", "-lock-timeout", "-parallelism", "-no-color", "-compact-warnings"})
# Flags with no bearing once the plan is saved: the apply of a saved plan never prompts.
DROPPED_OPTIONS = frozenset({"-auto-approve", "-input"})
PLAN_VALUE_OPTIONS = frozenset({"-target", "-replace", "-var", "-var-file"})
VALUE_OPTIONS = PLAN_VALUE_OPTIONS | {"-lock-timeout", "-parallelism"}


@dataclass
class BoundApply:
    """What a bound line asks for: plan (or review the saved `plan_file`) in `directory`, then apply it."""

    tool: str  # as the line names it: terraform or tofu
    subcommand: str  # apply or destroy
    directory: str  # relative to the workspace as the line reaches it (`cd`, `-chdir`), "." by default
    destroy: bool = False
    refresh: bool = True
    targets: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    var_files: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    apply_options: list[str] = field(default_factory=list)  # for the apply of the saved plan
    plan_file: str | None = None  # a saved plan the line names, as written (relative to `directory`)
    skipped: list[str] = field(default_factory=list)  # the line's other commands, which are not run


class NotBound(Exception):
    """The line cannot be bound to a reviewed plan; the message says why, for the question's content."""


def bound_apply(line: str) -> BoundApply:
    """The apply `line` asks for; NotBound when it cannot be bound to a reviewed plan."""
    commands = _commands(line)
    if len(changing_commands(line)) != 1:
        raise NotBound("the line makes more than one change")
    directory = "."
    found: BoundApply | None = None
    skipped: list[str] = []
    for words in commands:
        if words[0] == "cd":
            if len(words) != 2 or words[1].startswith("-"):
                raise NotBound(f"`{shlex.join(words)}` leads to a directory that cannot be told from the line")
            directory = _joined(directory, words[1])
            continue
        chdir, subcommand, args = _global_options(words)
        where = directory if chdir is None else _joined(directory, chdir)
        if subcommand in HARMLESS_SUBCOMMANDS:
            skipped.append(shlex.join(words))
            continue
        if subcommand not in ("apply", "destroy") or found is not None:
            raise NotBound(f"it runs `{shlex.join(words)}` beside the apply")
        found = _apply(program_name(words[0]), subcommand, where, args)
    if found is None:  # (changing_commands found the change in a form not read here)
        raise NotBound("the apply is not a command of its own on the line")
    found.skipped = skipped
    return found


def _commands(line: str) -> list[list[str]]:
    """The line's simple commands, when it is only such commands joined by `&&`, `;` or newlines, with no
    word computed at run time; NotBound otherwise. Two readers must agree: shlex for the operators between
    commands, infra_commands' bash reader for what is dynamic and where commands end."""
    try:
        parsed = parse_commands(line)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace = " \t"  # a newline ends a command, as `;` does
        tokens = list(lexer)
    except (ShellSyntaxError, ValueError, RecursionError):
        raise NotBound("the line cannot be read") from None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token == "\n" or token in SEPARATORS:
            commands.append([])
        elif token and token.strip(";&|()<>") == "":
            raise NotBound(f"it uses `{token}` (only `&&`, `;` and new lines join commands that can be bound)")
        else:
            commands[-1].append(token)
    commands = [words for words in commands if words]
    if any(w.dynamic for c in parsed for w in c.words):
        raise NotBound("some of its words are computed when it runs")
    if any(c.stdin_text is not None for c in parsed) or [[w.text for w in c.words] for c in parsed] != commands:
        raise NotBound("the line is more than simple commands")
    return commands


def _global_options(words: list[str]) -> tuple[str | None, str, list[str]]:
    """(-chdir's directory, the subcommand, its arguments) of a terraform/tofu command; NotBound otherwise."""
    if ASSIGNMENT.match(words[0]):
        raise NotBound(f"it sets {words[0].partition('=')[0]} for a command (not carried into a plan)")
    if program_name(words[0]) not in TOOLS:
        raise NotBound(f"`{shlex.join(words)}` is neither cd nor a terraform/tofu command")
    chdir = None
    for index, word in enumerate(words[1:], start=1):
        if not word.startswith("-"):
            return chdir, word, words[index + 1 :]
        name, _, value = word.lstrip("-").partition("=")
        if name != "chdir" or not value:
            raise NotBound(f"{words[0]}'s option {word} cannot be carried into a plan")
        chdir = value
    raise NotBound(f"`{shlex.join(words)}` runs no subcommand")


def _apply(tool: str, subcommand: str, directory: str, args: list[str]) -> BoundApply:
    bound = BoundApply(tool, subcommand, directory, destroy=subcommand == "destroy")
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if not word.startswith("-") or word == "-":
            if bound.plan_file is not None or subcommand != "apply":
                raise NotBound(f"{tool} {subcommand} is given more than a plan file ({word})")
            bound.plan_file = word
            continue
        name, has_value, value = word.partition("=")
        name = "-" + name.lstrip("-")
        if name in VALUE_OPTIONS and not has_value:
            if index >= len(args):
                raise NotBound(f"{name} has no value")
            value, index = args[index], index + 1
        written = word if has_value else (f"{name}={value}" if value else name)
        if not _take(bound, name, value, written):
            raise NotBound(f"the option {written} cannot be carried into a plan")
    planning = bound.destroy or bound.targets or bound.replace or bound.var_files
    if bound.plan_file is not None and (planning or bound.variables or not bound.refresh):
        raise NotBound("planning options beside a saved plan, which terraform refuses")
    return bound


def _take(bound: BoundApply, name: str, value: str, written: str) -> bool:
    """Carry one option into `bound`; False for one this module does not understand."""
    if name in DROPPED_OPTIONS:
        return True
    if name == "-destroy" and value in ("", "true"):
        bound.destroy = True
    elif name == "-refresh" and value in ("", "true", "false"):
        bound.refresh = value != "false"
    elif name == "-target" and value:
        bound.targets.append(value)
    elif name == "-replace" and value:
        bound.replace.append(value)
    elif name == "-var-file" and value:
        bound.var_files.append(value)
    elif name == "-var" and "=" in value:
        variable, _, setting = value.partition("=")
        bound.variables[variable] = setting
    elif name in APPLY_OPTIONS:
        bound.apply_options.append(written)
    else:
        return False
    return True


def _joined(directory: str, path: str) -> str:
    """Where `cd path` from `directory` leads (both as the line writes them; the tool resolves them)."""
    return path if directory == "." or path.startswith("/") else f"{directory}/{path}"


def applies_terraform(line: str) -> bool:
    """Whether one of the line's changing commands is a terraform/tofu apply or destroy (bound or not)."""
    return any(
        not words[0].dynamic
        and program_name(words[0].text) in TOOLS
        and any(w.text in ("apply", "destroy") for w in words[1:])
        for words in changing_commands(line)
    )
