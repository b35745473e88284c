"""What approving a bash call's line approved: the changes it showed, where, and under which environment.

A shim's run during the call is covered (runs without a second question) only when all three hold:

- **what**: a changing command the line showed runs it (`approval_covers`: the same program, the words
  as shown), or a driver the line showed runs it as that driver's own child, with the same verb
  (guard/drivers.py: `terragrunt apply` covers terraform's `apply`, not its `destroy`). A line the rule
  cannot read (`x=(a)`, `case … esac`, `for ((…))`, `bash -c "$X"`) was asked as a whole, unread: it
  approves nothing beyond itself, so each change its scripts make is asked on its own.
- **where**: the run's directory is the call's, or one the line itself names (`cd DIR`, `pushd DIR`,
  terraform's `-chdir=DIR`, terragrunt's `--working-dir`/`--terragrunt-working-dir DIR`), resolved from the
  call's directory and from the directory named before it (`cd a && cd b` is a/b). A driver's child may
  run beneath one of them: terragrunt runs terraform in `.terragrunt-cache/…` or in each module of a
  run-all, cdktf in `cdktf.out/stacks/NAME`.
- **under which environment**: every variable that changes what the run does (`RUN_VARIABLES`,
  `RUN_PREFIXES`, and the credentials table's, which pick the account, project or cluster) has the value
  the call started with, or one the line itself assigns (`TF_WORKSPACE=prod terraform apply`, `export
  KUBECONFIG=./kc`, `unset X`). A line that loads its environment through a wrapper (`aws-vault exec`,
  `doppler run`, `direnv exec`…: `ENVIRONMENT_LOADERS`) shows the credentials that wrapper gives, whatever
  they are: the credentials table's variables are not compared for that line; the others still are.

Values are compared, never shown: the question names the variables that differ.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from iac_code.cloud_credentials import is_credential_variable
from iac_code.credentials import held_cloud_credentials
from iac_code.guard.channel import ShimRequest
from iac_code.guard.drivers import child_verb, driven_verb
from iac_code.infra_commands import approval_covers
from iac_code.infra_commands.clis import CANONICAL_NAMES
from iac_code.infra_commands.rule import ANYTHING, UNREADABLE, changing_commands, program_name, simple_commands
from iac_code.infra_commands.shell_syntax import ShellSyntaxError, SimpleCommand, Word, parse_commands
from iac_code.infra_commands.wrappers import ASSIGNMENT, WRAPPERS

# Variables that change what a run does, compared with what the line showed. TF_VAR_* is not among them:
# terragrunt hands a module's inputs to terraform that way, and a variable's value is the configuration's
# business, as a .tfvars file is (a reviewed plan shows its effect).
RUN_VARIABLES = frozenset(
    {
        "TF_CLI_ARGS",  # arguments terraform adds to every command: `-destroy`, even a subcommand
        "TF_WORKSPACE",  # which state the run changes
        "TF_DATA_DIR",  # which backend configuration and modules it uses
        "KUBECONFIG",  # which cluster kubectl and helm act on
        "HELM_NAMESPACE",  # where helm installs or uninstalls
        "HELMFILE_ENVIRONMENT",  # which environment's releases helmfile syncs
    }
)
RUN_PREFIXES = (
    "TF_CLI_ARGS_",  # `TF_CLI_ARGS_apply=-destroy`
    "HELM_KUBE",  # HELM_KUBECONTEXT, HELM_KUBEAPISERVER, HELM_KUBETOKEN…: which cluster, as whom
    "TERRAGRUNT_",  # terragrunt reads every flag from these (its working directory, the terraform it runs)
    "TG_",  # their new names
)
# Wrappers that run a command with an environment they load (a profile, a project's secrets, an .envrc).
ENVIRONMENT_LOADERS = frozenset(
    {"aws-vault", "doppler", "infisical", "op", "saml2aws", "direnv", "dotenv", "env-cmd", "pipenv", "mise", "devbox"}
)
SETTERS = frozenset({"export", "env", "declare", "typeset", "local", "readonly"})  # `export NAME=value`
DIRECTORY_CHANGES = frozenset({"cd", "pushd"})
WORKING_DIR_OPTIONS = frozenset({"-chdir", "--chdir", "--working-dir", "--terragrunt-working-dir"})
WORKING_DIR_PROGRAMS = frozenset({"terraform", "tofu", "terragrunt"})
_PLAIN_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
MAX_DEPTH = 4  # shell strings inside shell strings looked into for assignments


def matters(name: str) -> bool:
    """Whether the variable `name` changes what a run of an infrastructure CLI does."""
    return name in RUN_VARIABLES or name.startswith(RUN_PREFIXES) or is_credential_variable(name)


class LineApproval:
    """The user's approval of `line`, run in `cwd` with `environment` (the call's, before the guard's own
    variables): which shim runs it covers."""

    def __init__(self, line: str, cwd: str | Path, environment: Mapping[str, str]) -> None:
        self.line = line
        self._changes = changing_commands(line)
        self.readable = ANYTHING not in self._changes and UNREADABLE not in self._changes
        self._directories = named_directories(line, str(cwd))
        assigned = assignments(line)
        self._shown = {
            name: {environment.get(name), *assigned.get(name, ())}
            for name in {*filter(matters, environment), *filter(matters, assigned)}
        }
        self._loads_credentials = bool(ENVIRONMENT_LOADERS & _wrappers(line))

    def uncovered(self, request: ShimRequest) -> str | None:
        """None when approving the line covers `request`'s run; else why it is asked (for the question)."""
        driven = self._drives(request)
        if not driven and not approval_covers(self.line, request.argv, request.env):
            if not self.readable:
                return "the approved line could not be read, so it approves nothing it did not show"
            return "the approved line did not show it"
        cwd = os.path.realpath(request.cwd)
        inside = cwd in self._directories or (driven and any(_beneath(cwd, d) for d in self._directories))
        if not inside:
            return f"the approved line ran in {', '.join(sorted(self._directories))}"
        differing = self._differing(request.env)
        if differing:
            return f"its environment differs from what the approved line showed: {', '.join(differing)}"
        return None

    def _drives(self, request: ShimRequest) -> bool:
        running = _canonical(request.program)
        verb = child_verb(running, request.args)
        if verb is None:
            return False
        for pattern in self._changes:
            if pattern[0].dynamic:
                continue
            driven = driven_verb(_canonical(pattern[0].text), pattern)
            if driven is not None and running in driven[0] and driven[1] == verb:
                return True
        return False

    def _differing(self, env: Mapping[str, str]) -> list[str]:
        names = {*self._shown, *filter(matters, env)}
        if self._loads_credentials:
            names = {name for name in names if not is_credential_variable(name)}
        # Inside a run the guard handed over (guard/handover.py), the agent's own credentials are set: given by
        # the guard, not picked by the command.
        held = held_cloud_credentials()
        names = {name for name in names if not (name in held and env.get(name) == held[name])}
        return sorted(name for name in names if env.get(name) not in self._shown.get(name, {None}))


def named_directories(line: str, cwd: str) -> frozenset[str]:
    """The call's directory and those the line names (see the module's doc), symlinks resolved."""
    base = os.path.realpath(cwd)
    found, previous = {base}, base
    for name in _directory_names(simple_commands(line) or []):
        found.add(os.path.realpath(os.path.join(base, name)))
        previous = os.path.realpath(os.path.join(previous, name))
        found.add(previous)
    return frozenset(found)


def _directory_names(commands: Sequence[Sequence[Word]]) -> Iterator[str]:
    for words in commands:
        if not words or words[0].dynamic:
            continue
        program = program_name(words[0].text)
        if program in DIRECTORY_CHANGES:
            operands = [word for word in words[1:] if not word.text.startswith("-")]
            if operands and not operands[0].dynamic:
                yield operands[0].text
        elif program in WORKING_DIR_PROGRAMS:
            yield from _working_dirs(words[1:])


def _working_dirs(args: Sequence[Word]) -> Iterator[str]:
    for index, word in enumerate(args):
        name, has_value, value = word.text.partition("=")
        if name not in WORKING_DIR_OPTIONS or word.dynamic:
            continue
        if has_value:
            yield value
        elif index + 1 < len(args) and not args[index + 1].dynamic:
            yield args[index + 1].text


def assignments(line: str, depth: int = 0) -> dict[str, set[str | None]]:
    """The values the line spells out for variables (`NAME=value` before a command or after `export`,
    `env`, `declare`…; None for `unset NAME`), in shell strings too (`bash -c '…'`). A value computed at
    run time is no value shown."""
    found: dict[str, set[str | None]] = {}

    def add(name: str, value: str | None) -> None:
        found.setdefault(name, set()).add(value)

    for command in _parsed(line):
        words = [word for word in command.words if not word.dynamic]
        start = next((i for i, word in enumerate(words) if not _PLAIN_ASSIGNMENT.fullmatch(word.text)), len(words))
        program = words[start].text if start < len(words) else ""
        for word in words[:start] + (words[start + 1 :] if program in SETTERS else []):
            if match := _PLAIN_ASSIGNMENT.fullmatch(word.text):
                add(match.group(1), match.group(2))
        if program == "unset":
            for word in words[start + 1 :]:
                add(word.text, None)
        elif program not in SETTERS and depth < MAX_DEPTH:
            for word in words[start:]:
                if any(blank in word.text for blank in " \t\n;"):
                    for name, values in assignments(word.text, depth + 1).items():
                        found.setdefault(name, set()).update(values)
    return found


def _wrappers(line: str) -> set[str]:
    """The wrappers the line's commands run through (`sudo aws-vault exec p -- terraform apply`: sudo and
    aws-vault)."""
    found: set[str] = set()
    for command in _parsed(line):
        words = list(command.words)
        while words and not words[0].dynamic and ASSIGNMENT.match(words[0].text):
            words = words[1:]
        for _ in range(MAX_DEPTH):
            if not words or words[0].dynamic or program_name(words[0].text) not in WRAPPERS:
                break
            program = program_name(words[0].text)
            inner = WRAPPERS[program](words[1:])
            if inner is None:
                break
            found.add(program)
            words = inner
    return found


def _parsed(line: str) -> list[SimpleCommand]:
    try:
        return parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return []


def _canonical(path: str) -> str:
    name = program_name(path)
    return CANONICAL_NAMES.get(name, name)


def _beneath(path: str, directory: str) -> bool:
    return os.path.commonpath([path, directory]) == directory
