"""The same rule on a command that is about to run: its exact argv, as a shim on PATH sees it (guard/).

No shell is left to read: the words are final. `changes_argv` says whether running them changes real
infrastructure; `approval_covers` says whether a user who approved a command *line* (the bash call's
visible question) already approved this run of one of its programs, so that it is not asked twice.

Approving a line approves the changing commands it shows, as rule.py finds them (wrappers unwrapped,
shells in shells parsed), each a pattern of words where a word computed at run time (`$X`, `$(…)`, a
glob) stands for any run of words, the program included (`$TF apply` covers `terraform apply`; `$CMD`
alone, anything). A line that cannot be read (`case … esac`, `x=(a)`) covers no run: what it runs is
asked run by run. Programs compare by name (`/usr/bin/terraform` is `terraform`, `microk8s.kubectl` is
`kubectl`), and approving a driver covers the same verb of the programs it runs: `terragrunt apply` the
terraform apply, not a destroy; `cdktf deploy` terraform apply; `helmfile apply` helm upgrade/install.
The run's environment counts: the arguments terraform takes from TF_CLI_ARGS* are part of the run, and
covered only when the line showed them. Nothing else: `terraform apply && sh deploy.sh` approved does not
cover a `kubectl delete` that deploy.sh runs. Binding an approval to the directory it was given for is the
caller's (guard/): an argv has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from iac_code.infra_commands.clis import (
    CANONICAL_NAMES,
    CHANGE_CHECKS,
    CHILD_SUBCOMMANDS,
    DRIVEN_PROGRAMS,
    DRIVEN_VERBS,
)
from iac_code.infra_commands.rule import (
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
    approved = changing_commands(line)
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
    approved, running = _canonical(pattern[0].text), _canonical(run[0].text)
    if running in DRIVEN_PROGRAMS.get(approved, ()):
        return _driven_verb_matches(approved, pattern[1:], running, run[1:])
    return approved == running and _words_match(pattern[1:], run[1:])


def _driven_verb_matches(driver: str, approved: Sequence[Word], child: str, running: Sequence[Word]) -> bool:
    """Whether a driver's approved subcommand (`terragrunt run-all apply`) has its child run this one
    (`terraform apply …`): the same verb only; a verb the line computed at run time, any."""
    verbs = DRIVEN_VERBS[driver]
    verb = next((word for word in approved if word.dynamic or word.text in verbs), None)
    if verb is None:
        return False
    if verb.dynamic:
        return True
    known = CHILD_SUBCOMMANDS.get(child, frozenset())
    child_verb = next((word.text for word in running if word.text in known), None)
    return child_verb in verbs[verb.text]


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
