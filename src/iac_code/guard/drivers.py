"""Programs that drive others (terragrunt and cdktf run terraform, helmfile runs helm): which runs of their
children an approval of the driver covers.

Approving a driver's command approves only the same verb of its own children, never every run of them:
`terragrunt apply` covers the `terraform apply` it starts, not a `terraform destroy` a script of the same
call runs. The children's other runs (init, plan, output, helm diff…) change nothing, so they run without
being covered. A verb is read from the words after the program's global options (infra_commands/clis.py's
tables of the options that take a value); a verb that cannot be told (a word computed at run time, options
read two ways) covers nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.infra_commands.clis import DEPLOY_OPTIONS, HELM_OPTIONS, HELMFILE_OPTIONS, TERRAFORM_OPTIONS
from iac_code.infra_commands.options import Options, operand_readings
from iac_code.infra_commands.shell_syntax import Word

TERRAFORMS = frozenset({"terraform", "tofu"})
HELMS = frozenset({"helm"})
# terraform commands that take a second word (`state rm`, `workspace delete`): the verb is both words.
TERRAFORM_GROUPS = frozenset({"state", "workspace", "env", "providers"})
# Go's boolean flags read these as false (`-destroy=false` applies); any other value of -destroy destroys.
GO_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
HELM_VERBS = {
    "install": "install", "upgrade": "install",  # `upgrade --install` installs or upgrades: one verb
    "uninstall": "uninstall", "delete": "uninstall", "del": "uninstall", "un": "uninstall",
    "rollback": "rollback",
}  # fmt: skip
# terragrunt commands that run one terraform command per module, named by the words after them.
TERRAGRUNT_FAN_OUT = frozenset({"run-all", "run"})
TERRAGRUNT_ALL = {"apply-all": "apply", "destroy-all": "destroy"}  # the old spellings of `run-all apply|destroy`

# (driver, its verb) -> (the programs it starts, the one verb of theirs that approving it covers), and why.
# terragrunt is not listed verb by verb: it hands its command to terraform unchanged (`terragrunt state rm x`
# runs `terraform state rm x`; run-all / run --all / apply-all only repeat it in each module), so each of its
# verbs covers the same verb of terraform (`same_terragrunt_verb`).
DRIVEN_VERBS: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("cdktf", "deploy"): (TERRAFORMS, "apply"),  # it synthesizes each stack, then `terraform apply`s it
    ("cdktf", "apply"): (TERRAFORMS, "apply"),  # deploy's other name
    ("cdktf", "watch"): (TERRAFORMS, "apply"),  # deploys again on every change of the code
    ("cdktf", "destroy"): (TERRAFORMS, "destroy"),  # `terraform destroy` of each stack
    ("helmfile", "apply"): (HELMS, "install"),  # `helm upgrade --install` of each release that differs
    ("helmfile", "sync"): (HELMS, "install"),  # the same for every release, differing or not
    ("helmfile", "charts"): (HELMS, "install"),  # sync's old name
    ("helmfile", "destroy"): (HELMS, "uninstall"),  # `helm uninstall` of each release
    ("helmfile", "delete"): (HELMS, "uninstall"),  # destroy's old name
}
# A release a helmfile marks `installed: false` is uninstalled by `helmfile apply|sync`: that uninstall is
# asked on its own (the approved line said apply, not uninstall).


def driven_verb(driver: str, pattern: Sequence[Word]) -> tuple[frozenset[str], str] | None:
    """The children and the verb of theirs that approving `pattern` (a command of the line, its program
    `driver`) covers; None when it drives nothing or its verb cannot be told."""
    args = pattern[1:]
    if driver == "terragrunt":
        verb = terragrunt_verb(args)
        return None if verb is None else (TERRAFORMS, verb)
    verb = _first_operand(args, DEPLOY_OPTIONS if driver == "cdktf" else HELMFILE_OPTIONS)
    return None if verb is None else DRIVEN_VERBS.get((driver, verb))


def child_verb(program: str, args: Sequence[str]) -> str | None:
    """The verb of a run of a driven program (`terraform apply -destroy` destroys); None when it cannot be told."""
    words = [Word(arg) for arg in args]
    if program in TERRAFORMS:
        return terraform_verb(words)
    if program in HELMS:
        verb = _first_operand(words, HELM_OPTIONS)
        return None if verb is None else HELM_VERBS.get(verb)
    return None


def terraform_verb(args: Sequence[Word]) -> str | None:
    first = _operand_indices(args, TERRAFORM_OPTIONS, 1)
    if not first:
        return None
    verb, rest = args[first[0]].text, args[first[0] + 1 :]
    if verb in TERRAFORM_GROUPS:
        second = _operand_indices(rest, TERRAFORM_OPTIONS, 1)
        return None if not second else f"{verb} {rest[second[0]].text}"
    return "destroy" if verb == "apply" and _destroys(rest) else verb


def terragrunt_verb(args: Sequence[Word]) -> str | None:
    """The terraform verb a terragrunt command runs: `run-all apply`, `run --all -- apply` and `apply-all`
    are apply."""
    first = _operand_indices(args, TERRAFORM_OPTIONS, 1)
    if not first:
        return None
    command = args[first[0]].text
    if command in TERRAGRUNT_ALL:
        return TERRAGRUNT_ALL[command]
    if command not in TERRAGRUNT_FAN_OUT:
        return terraform_verb(args)
    return terraform_verb([word for word in args[first[0] + 1 :] if word.text != "--"])


def _destroys(args: Sequence[Word]) -> bool:
    for word in args:
        name, has_value, value = word.text.lstrip("-").partition("=")
        if word.text.startswith("-") and name == "destroy" and not (has_value and value in GO_FALSE):
            return True
    return False


def _first_operand(args: Sequence[Word], options: Options) -> str | None:
    first = _operand_indices(args, options, 1)
    return args[first[0]].text if first else None


def _operand_indices(args: Sequence[Word], options: Options, count: int) -> tuple[int, ...] | None:
    """Where the first `count` operands are, when every reading of the options agrees and none of them is
    computed at run time; else None."""
    readings = operand_readings(args, options, count)
    if readings is None or len(readings) != 1:
        return None
    (indices,) = readings
    if not indices or any(args[index].dynamic for index in indices):
        return None
    return indices
