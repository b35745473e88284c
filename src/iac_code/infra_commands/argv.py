"""The same rule on a command that is about to run: its exact argv, as a shim on PATH sees it (guard/).

No shell is left to read: the words are final. `changes_argv` says whether running them changes real
infrastructure; `approval_covers` says whether a user who approved a command *line* (the bash call's
visible question) already approved this run of one of its programs, so that it is not asked twice.

Approving a line approves the changing commands it shows, as rule.py finds them (wrappers unwrapped,
shells in shells parsed), each a pattern of words where a word computed at run time (`$X`, `$(…)`, a
glob) stands for any run of words after the program's name (`terraform $ACTION` covers `terraform apply`).
A program computed at run time (`$CMD`, `bash -c "$X"`) and a line the rule cannot read (`x=(a)`,
`case … esac`) cover nothing: the user was shown no change there, so each run is asked. The run's
environment counts: the arguments terraform takes from TF_CLI_ARGS* are part of the run, and covered only
when the line showed them. Programs compare by name (`/usr/bin/terraform` is `terraform`,
`microk8s.kubectl` is `kubectl`). Nothing else: `terraform apply && sh deploy.sh` approved does not cover a
`kubectl delete` that deploy.sh runs. (What a driver such as terragrunt covers of the terraform it runs,
and the directory and environment an approval holds for, are the guard's: guard/approvals.py.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from iac_code.infra_commands.clis import CANONICAL_NAMES, CHANGE_CHECKS
from iac_code.infra_commands.rule import (
    ANYTHING,
    UNREADABLE,
    Pattern,
    changing_commands,
    command_changes,
    program_name,
    terraform_assignments,
)
from iac_code.infra_commands.shell_syntax import SimpleCommand, Word

# Names a line may use that are shell aliases, not programs: a shim by such a short name would shadow
# whatever binary happens to bear it.
ALIAS_NAMES = frozenset({"tf", "k"})
# Launchers that run a package's binary from their own directory, ahead of PATH (`npx cdk deploy` runs
# node_modules/.bin/cdk): shimmed so that what they launch is classified.
LAUNCHERS = frozenset({"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun"})

# The programs a shim stands in for: every CLI whose subcommands can change real infrastructure.
GUARDED_PROGRAMS = (frozenset(CHANGE_CHECKS) - ALIAS_NAMES) | LAUNCHERS
NO_ENVIRONMENT: Mapping[str, str] = MappingProxyType({})


def changes_argv(argv: Sequence[str], env: Mapping[str, str] = NO_ENVIRONMENT) -> bool:
    """Whether running `argv` (argv[0] the program, as invoked or by base name) changes infrastructure, in
    the environment `env` (terraform takes arguments from TF_CLI_ARGS*: `TF_CLI_ARGS=apply terraform`)."""
    return bool(_runs(argv, env))


def approval_covers(line: str, argv: Sequence[str], env: Mapping[str, str] = NO_ENVIRONMENT) -> bool:
    """Whether approving the command line `line` covers running `argv` during that command, in the environment
    `env`: the arguments it adds must be ones the line showed (`TF_CLI_ARGS=-auto-approve terraform apply`)."""
    runs = _runs(argv, env)
    if not runs:
        return False
    # A string computed at run time, a line that cannot be read: the user was shown no change there.
    approved = [pattern for pattern in changing_commands(line) if pattern not in (ANYTHING, UNREADABLE)]
    return all(any(_matches(pattern, run) for pattern in approved) for run in runs)


def _runs(argv: Sequence[str], env: Mapping[str, str]) -> list[Pattern]:
    words = [Word(arg) for arg in argv]
    environment = [Word(f"{name}={value}") for name, value in env.items()]
    return command_changes(words, SimpleCommand(words), 0, terraform_assignments([*environment, *words]))


def _canonical(path: str) -> str:
    name = program_name(path)
    return CANONICAL_NAMES.get(name, name)


def _matches(pattern: Pattern, run: Pattern) -> bool:
    if pattern == UNREADABLE:
        return False  # the user saw text that cannot be read: what it runs, each run is asked
    if any(word.dynamic for word in run):
        return pattern[0].dynamic and len(pattern) == 1  # a run read from stdin: only "anything" covers it
    if pattern[0].dynamic:
        return _words_match(pattern, run)
    return _canonical(pattern[0].text) == _canonical(run[0].text) and _words_match(pattern[1:], run[1:])


def _words_match(pattern: Sequence[Word], words: Sequence[Word]) -> bool:
    """Whether `words` fit `pattern`, a dynamic word in it standing for any run of zero or more words."""
    reachable = {0}  # how many of `words` the pattern read so far can have matched
    for expected in pattern:
        if not reachable:
            return False
        if expected.dynamic:
            reachable = set(range(min(reachable), len(words) + 1))
        else:
            reachable = {i + 1 for i in reachable if i < len(words) and words[i].text == expected.text}
    return len(words) in reachable
