"""The read-only forms of terraform, tofu, terragrunt, kubectl, oc, helm and pulumi (read_only.py).

- terraform / tofu: `version`, `fmt`, `workspace show` are pure; `plan` (also `-out`, `-destroy`,
  `-refresh-only`: a plan file and the state lock it takes and releases are no change), `show`, `output`,
  `state list|show|pull`, `providers [schema]`, `validate`, `graph`, `workspace list`, `init` (not
  `-migrate-state`/`-force-copy`, which write state), `get`, `modules`, `metadata functions` read, but run
  the workspace's configuration (a backend block's endpoint, provider binaries, `data "external"`). Each
  subcommand's own options are a table (Go's flag package: `-x`, `--x`, `-x=v`, `-x v`; the first operand
  ends them); anything else is no read-only form. TF_CLI_ARGS* are folded in first (terraform_env.py).
- terragrunt: the same forms, with its own options (anywhere), `run-all X`, `run [--all] -- X`, `X-all`;
  always running workspace code (terragrunt.hcl's `run_cmd` and hooks run on every command).
- kubectl / oc: get (not secrets, not `-f`/`-k`), describe, logs, explain, api-resources, api-versions,
  version, cluster-info (not `dump`), top, events, wait, diff, kustomize (no plugins), auth can-i|whoami,
  config view (not `--raw`/`--flatten`) | get-contexts | current-context | get-clusters | get-users,
  rollout status|history. exec, cp, attach, debug, port-forward and proxy are not reads.
- helm: list, status, get, history, show, template, search, version, lint, verify, repo list,
  dependency list; no plugin (`helm diff` is one: a program of the user's plugin directory), no chart from
  a downloader plugin's scheme (`s3://`), no `--post-renderer`.
- pulumi: `version` pure; preview, whoami, about, logs, config (not `--show-secrets`), stack
  [ls|output|history|export] run the workspace's code or its Pulumi.yaml backend.

Options that send the credentials elsewhere or run a program with them (`--server`, `--kubeconfig`,
`--token`, `--kube-apiserver`, terragrunt's `--tf-path`) are never in a read-only form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iac_code.infra_commands.cli_grammar import Grammar, ReadForm, parse_call
from iac_code.infra_commands.terraform_env import subcommand, with_environment

PURE, WORKSPACE = ReadForm.PURE, ReadForm.RUNS_WORKSPACE_CODE


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True)
class _Subcommand:
    """A terraform subcommand's read form: its options (Go's flag package) and how many operands it takes."""

    form: ReadForm
    with_value: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    operands: int | None = 0  # at most; None: any number

    def fits(self, args: Sequence[str]) -> bool:
        index = 0
        while index < len(args) and args[index].startswith("-") and args[index] != "-":
            word = args[index]
            index += 1
            if word == "--":
                break
            name, equals, _ = word.lstrip("-").partition("=")
            if "-" + name in self.flags:
                continue
            if "-" + name not in self.with_value or (not equals and index >= len(args)):
                return False
            index += 0 if equals else 1
        return self.operands is None or len(args) - index <= self.operands


def _tf(form: ReadForm, with_value: str = "", flags: str = "", operands: int | None = 0) -> _Subcommand:
    return _Subcommand(form, _set(with_value), _set(flags), operands)


TERRAFORM_READS = {
    "version": _tf(PURE, flags="-json"),
    "fmt": _tf(PURE, flags="-list -write -diff -check -recursive -no-color", operands=None),
    "workspace show": _tf(PURE),
    "metadata functions": _tf(PURE, flags="-json"),
    "plan": _tf(
        WORKSPACE,
        "-var -var-file -target -replace -exclude -out -lock-timeout -parallelism -state -generate-config-out",
        "-destroy -refresh-only -refresh -lock -input -no-color -detailed-exitcode -compact-warnings -json",
    ),
    "show": _tf(WORKSPACE, flags="-json -no-color", operands=1),
    "output": _tf(WORKSPACE, "-state", "-json -raw -no-color", operands=1),
    "state list": _tf(WORKSPACE, "-state -id", operands=None),
    "state show": _tf(WORKSPACE, "-state", operands=1),
    "state pull": _tf(WORKSPACE),
    "providers": _tf(WORKSPACE, "-test-directory"),
    "providers schema": _tf(WORKSPACE, flags="-json"),
    "validate": _tf(WORKSPACE, "-test-directory", "-json -no-color -no-tests"),
    "graph": _tf(WORKSPACE, "-type -plan -module-depth", "-draw-cycles"),
    "workspace list": _tf(WORKSPACE),
    "init": _tf(
        WORKSPACE,
        "-backend-config -from-module -plugin-dir -lock-timeout -lockfile -test-directory -var -var-file",
        "-backend -get -input -lock -no-color -reconfigure -upgrade -json -ignore-remote-version",
    ),
    "get": _tf(WORKSPACE, "-test-directory", "-update -no-color"),
    "modules": _tf(WORKSPACE, flags="-json"),
}
TERRAFORM_VERSION_FLAGS = frozenset({"-v", "-version", "--version"})


def terraform_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    folded = with_environment(args, env)
    return None if folded is None else _terraform_args_form(folded)


def _terraform_args_form(args: Sequence[str]) -> ReadForm | None:
    rest = list(args[1:] if args and args[0].startswith("-chdir=") else args)
    if len(rest) == 1 and rest[0] in TERRAFORM_VERSION_FLAGS:
        return PURE
    name = subcommand(rest)
    words = name.split()
    spec = TERRAFORM_READS.get(name)
    if spec is None or rest[: len(words)] != words:  # an option before the subcommand: not one of these
        return None
    return spec.form if spec.fits(rest[len(words) :]) else None


TERRAGRUNT_WITH_VALUE = _set(
    "--working-dir --terragrunt-working-dir --config --terragrunt-config --log-level --terragrunt-log-level "
    "--log-format --download-dir --terragrunt-download-dir --iam-assume-role --terragrunt-iam-role "
    "--iam-assume-role-session-name --parallelism --terragrunt-parallelism --queue-include-dir "
    "--terragrunt-include-dir --queue-exclude-dir --terragrunt-exclude-dir --feature --source --terragrunt-source"
)
TERRAGRUNT_FLAGS = _set("--all -a --graph --non-interactive --terragrunt-non-interactive --no-color --log-disable")
TERRAGRUNT_DENIED = _set("--tf-path --terragrunt-tfpath")  # the program it runs as terraform
TERRAGRUNT_OWN_READS = _set("render-json render info hclfmt hclvalidate find list")


def terragrunt_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    rest: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        name, equals, _ = word.partition("=")
        if name in TERRAGRUNT_DENIED:
            return None
        if name in TERRAGRUNT_WITH_VALUE:
            index += 0 if equals else 1
        elif name not in TERRAGRUNT_FLAGS:
            rest.append(word)
    if index > len(args):
        return None
    if rest[:1] == ["run-all"]:
        rest = rest[1:]
    elif rest[:1] == ["run"]:
        rest = rest[2:] if rest[1:2] == ["--"] else rest[1:]
    elif rest[:1] and rest[0] in ("plan-all", "output-all", "validate-all"):
        rest = [rest[0].removesuffix("-all"), *rest[1:]]
    if len(rest) == 1 and rest[0] in TERRAGRUNT_OWN_READS:
        return WORKSPACE
    return None if terraform_form(rest, env) is None else WORKSPACE


KUBECTL = Grammar(
    with_value=_set(
        "-n --namespace --as --as-group --as-uid --cache-dir --cluster --context --user --request-timeout -v --v "
        "--vmodule --log-flush-frequency --profile --profile-output"
    ),
    flags=_set("--match-server-version --warnings-as-errors --disable-compression -h --help"),
    denied=_set(
        "-s --server --kubeconfig --token --username --password --client-certificate --client-key "
        "--certificate-authority --insecure-skip-tls-verify --tls-server-name --kuberc"
    ),
    local_with_value=_set(
        "-o --output -l --selector --field-selector -L --label-columns --sort-by --template --chunk-size -f "
        "--filename -k --kustomize -c --container --since --since-time --tail --limit-bytes --max-log-requests "
        "--for --timeout --raw --subresource --api-group --revision --pod-running-timeout"
    ),
)
KUBECTL_READS = _set(
    "get describe logs explain api-resources api-versions version cluster-info top events wait diff kustomize"
)
KUBECTL_GROUP_READS = {
    "auth": _set("can-i whoami"),
    "config": _set("view get-contexts current-context get-clusters get-users"),
    "rollout": _set("status history"),
}
KUBECTL_VERB_DENIED = {
    "get": _set("-f --filename -k --kustomize"),  # the resources named by a file: a Secret among them
    "view": _set("--raw --flatten"),  # `config view --raw` prints the credentials
    "kustomize": _set("--enable-alpha-plugins --enable-exec --enable-helm --helm-command"),
}


def kubectl_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, KUBECTL)
    if call is None or not call.operands:
        return None
    verb, rest = call.operands[0], call.operands[1:]
    if verb in KUBECTL_GROUP_READS:
        if not rest or rest[0] not in KUBECTL_GROUP_READS[verb]:
            return None
        verb = rest[0]
    elif verb not in KUBECTL_READS or (verb == "cluster-info" and rest):
        return None
    if call.has(*KUBECTL_VERB_DENIED.get(verb, ())):
        return None
    # a Secret's data is a credential to the cluster as often as not (service-account tokens)
    if verb == "get" and any("secret" in word.lower() for word in args):
        return None
    return PURE


HELM = Grammar(
    with_value=_set(
        "-n --namespace --kube-context --kube-as-user --kube-as-group --burst-limit --qps --registry-config "
        "--repository-cache --repository-config --content-cache"
    ),
    flags=_set("--debug -h --help"),
    denied=_set(
        "--kube-apiserver --kube-token --kube-ca-file --kubeconfig --kube-tls-server-name "
        "--kube-insecure-skip-tls-verify --post-renderer --post-renderer-args"
    ),
    local_with_value=_set(
        "-o --output -f --values --set --set-string --set-file --set-json --set-literal --revision --max --offset "
        "-l --selector --filter --repo --api-versions -a --kube-version -s --show-only --name-template --output-dir "
        "--version --time-format --ca-file --cert-file --key-file --keyring --username --password"
    ),
)
HELM_READS = _set("list ls status history hist template version lint verify")
HELM_GROUP_READS = {
    "get": _set("all values manifest notes hooks metadata"),
    "show": _set("all chart readme values crds"),
    "inspect": _set("all chart readme values crds"),
    "search": _set("hub repo"),
    "repo": _set("list ls"),
    "dependency": _set("list ls"),
    "dep": _set("list ls"),
}
CHART_SCHEMES = ("http://", "https://", "oci://", "file://")


def helm_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, HELM)
    if call is None or not call.operands:
        return None
    verb, rest = call.operands[0], call.operands[1:]
    if verb in HELM_GROUP_READS:
        if not rest or rest[0] not in HELM_GROUP_READS[verb]:
            return None
    elif verb not in HELM_READS:
        return None  # `helm diff`, `helm secrets`: a plugin is a program of the plugin directory
    # a chart URL of another scheme is fetched by a downloader plugin
    if any("://" in word and not word.startswith(CHART_SCHEMES) for word in rest):
        return None
    return PURE


PULUMI = Grammar(
    with_value=_set("-C --cwd --color -v --verbose"),
    flags=_set("--logflow --logtostderr --non-interactive -e --emoji -h --help --disable-integrity-checking"),
    denied=_set("--tracing --tracing-header --profiling --memprofilerate --show-secrets"),
    local_with_value=_set(
        "-s --stack -t --target -c --config -m --message -p --parallel --policy-pack --policy-pack-config "
        "--save-plan --config-file --replace --exclude"
    ),
)
PULUMI_READS = {
    "version": PURE,
    "preview": WORKSPACE,
    "pre": WORKSPACE,
    "whoami": WORKSPACE,
    "about": WORKSPACE,
    "logs": WORKSPACE,
    "config": WORKSPACE,
    "stack": WORKSPACE,
}
PULUMI_GROUP_READS = {"stack": _set("ls list output history hist export")}


def pulumi_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, PULUMI)
    if call is None or not call.operands:
        return None
    verb, rest = call.operands[0], call.operands[1:]
    if verb in PULUMI_GROUP_READS and rest and rest[0] not in PULUMI_GROUP_READS[verb]:
        return None
    if verb == "config" and rest:  # `config get` prints a secret decrypted
        return None
    return PULUMI_READS.get(verb)
