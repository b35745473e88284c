"""The forms of one command that a deny or ask rule is matched against, besides the command as written.

`Bash(terraform destroy *)` names a verb; the line may put the CLI's global options before it
(`terraform -chdir=. destroy`, `kubectl --context prod -n app delete pod x`) or spell the verb otherwise
(`terraform apply -destroy`). A reading is the command with the CLI's global options and their values left
out (options.py's tables; an option neither table knows is read both ways, as the change rule reads it),
and for terraform and its kin, `apply -destroy` read as `destroy`, also where TF_CLI_ARGS* put it. kubectl,
oc, helm and pulumi (pflag, options anywhere) also lose their global options placed after the verb
(`kubectl delete -n prod pod x`).

Only deny and ask rules take these readings (agent/rule_patterns.py): an allow rule fits the command as
written, since a global option changes what runs (`--kubeconfig` may name a credential plugin, `-chdir`
another configuration), and an allow rule must not reach further than its words.
"""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.infra_commands.clis import (
    CANONICAL_NAMES,
    HELM_OPTIONS,
    KUBECTL_OPTIONS,
    PULUMI_OPTIONS,
    TERRAFORM_OPTIONS,
)
from iac_code.infra_commands.options import Options, is_option, operand_readings, options_end
from iac_code.infra_commands.rule import TERRAFORM_PROGRAMS, Assignments, program_name, terraform_readings
from iac_code.infra_commands.shell_syntax import Word

# program → its global options, and whether they may also follow the verb (pflag's interspersed options)
GLOBAL_OPTIONS: dict[str, tuple[Options, bool]] = {
    **{name: (TERRAFORM_OPTIONS, False) for name in TERRAFORM_PROGRAMS},
    "kubectl": (KUBECTL_OPTIONS, True),
    "oc": (KUBECTL_OPTIONS, True),
    "helm": (HELM_OPTIONS, True),
    "pulumi": (PULUMI_OPTIONS, True),
}
# Go's flag package: `-destroy`, `--destroy`, `-destroy=true` (and its other spellings of true)
_DESTROY_FLAGS = frozenset({"-destroy", "--destroy"})
_GO_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})


def rule_readings(words: Sequence[Word], env: Assignments | None = None) -> list[list[Word]]:
    """`words` as written, then each other form a deny or ask rule should see; the first word is kept.
    `env`: the values the line gives TF_CLI_ARGS* (rule.terraform_assignments): terraform's changing
    readings with them folded in are read too (`TF_CLI_ARGS_apply=-destroy terraform apply` destroys)."""
    found: list[list[Word]] = [list(words)]
    if not words or words[0].dynamic:
        return found
    name = program_name(words[0].text)
    table = GLOBAL_OPTIONS.get(CANONICAL_NAMES.get(name, name))
    if table is None:
        return found
    options, interspersed = table
    terraform = name in TERRAFORM_PROGRAMS
    bases = [list(words), *(terraform_readings(words, env) if terraform and env else [])]
    for base in bases:
        for reading in [base, *_without_global_options(base, options, interspersed)]:
            for form in (reading, _apply_destroy_as_destroy(reading) if terraform else reading):
                if form not in found:
                    found.append(form)
    return found


def _without_global_options(words: Sequence[Word], options: Options, interspersed: bool) -> list[list[Word]]:
    args = words[1:]
    readings = operand_readings(args, options, 1) or set()
    forms: list[list[Word]] = []
    for reading in sorted(readings):
        if not reading:
            continue
        rest = list(args[reading[0] :])
        forms.append([words[0], *(_drop_known_options(rest, options) if interspersed else rest)])
    return forms


def _drop_known_options(args: Sequence[Word], options: Options) -> list[Word]:
    """The words with the global options this table knows (and their values) left out, up to `--`."""
    before = options_end(args)
    kept: list[Word] = []
    index = 0
    while index < len(before):
        word = before[index]
        name = word.text.split("=", 1)[0]
        if is_option(word) and (name in options.flags or name in options.with_value):
            index += 2 if word.text in options.with_value else 1
            continue
        kept.append(word)
        index += 1
    return [*kept, *args[len(before) :]]


def _apply_destroy_as_destroy(words: list[Word]) -> list[Word]:
    """`terraform apply -destroy …` as `terraform destroy …` (the flag dropped); a value computed at run
    time (`-destroy=$X`) may be true."""
    if len(words) < 2 or words[1].text != "apply":
        return words
    rest = words[2:]
    destroying = [w for w in options_end(rest) if _is_destroy_flag(w)]
    if not destroying:
        return words
    return [words[0], Word("destroy"), *(w for w in rest if w not in destroying)]


def _is_destroy_flag(word: Word) -> bool:
    name, equals, value = word.text.partition("=")
    if name not in _DESTROY_FLAGS:
        return False
    return not equals or word.dynamic or value in _GO_TRUE
