"""Whether a run of a guarded CLI is a known read-only form: the allow-list that decides when the guard may
hand the user's cloud credentials to a run without asking (issue 36, 2a).

The opposite of the rest of this package, which recognises changing commands and lets the unknown pass:
here only what each CLI's grammar table lists reads, and anything else does not — an unknown subcommand or
plugin (`kubectl foo` runs kubectl-foo), a user alias, an option not in the table before the subcommand, an
option list that cannot be read, a verb that hands out a credential (`aws eks get-token`). Options are read
as the CLI reads them (cli_grammar.py: `kubectl --cache-dir --dry-run=server delete …` deletes), after the
environment that changes the arguments is folded in (terraform's TF_CLI_ARGS*, terraform_env.py). A program
is judged by its base name, as argv.py does (`/usr/bin/kubectl`, `terraform1.5`; `python3 -m awscli` is
aws); another name (`tfw` linked to terraform) is no known form.

Two kinds of read (cli_grammar.ReadForm): PURE runs nothing the agent could have written, so the credentials
may go to it unasked (`is_read_only`); RUNS_WORKSPACE_CODE reads by the grammar but runs the working
directory's code or configuration with the credentials (terraform plan: `data "external"` programs,
provider binaries, a backend's endpoint; pulumi preview: the program; terragrunt: its hooks), which the
agent can write — the caller decides whether to ask (`read_only_form`).

The run's environment matters too: a variable that loads code into the CLI or changes whom it trusts or
where it sends the credentials (LD_PRELOAD, PYTHONPATH, NODE_OPTIONS, SSL_CERT_FILE, KUBECONFIG,
KUBECTL_EXTERNAL_DIFF, HELM_KUBEAPISERVER, AWS_ENDPOINT_URL, AWS_DATA_PATH, CLOUDSDK_API_ENDPOINT_OVERRIDES_*,
AZURE_CONFIG_DIR …) makes no read-only form when the run set it: when its value differs from this process's
environment (the agent's, which the command inherited). `env` is the run's environment as it started,
before the guard hands anything over. PATH is the caller's to fix: these CLIs start helpers by name
(kubeconfig `exec` plugins, kubectl diff's `diff`, gcloud's python), so a handed-over run should get the
PATH the agent's commands start with, not one the command put a directory of its own in front of.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from iac_code.infra_commands.cli_grammar import ReadForm
from iac_code.infra_commands.clis import CANONICAL_NAMES
from iac_code.infra_commands.read_only_cloud import aliyun_form, aws_form, az_form, bq_form, gcloud_form, gsutil_form
from iac_code.infra_commands.read_only_tools import (
    helm_form,
    kubectl_form,
    pulumi_form,
    terraform_form,
    terragrunt_form,
)
from iac_code.infra_commands.rule import program_name

FormOf = Callable[[Sequence[str], Mapping[str, str], "str | None"], "ReadForm | None"]

READ_FORMS: dict[str, FormOf] = {
    "terraform": terraform_form,
    "tofu": terraform_form,
    "terragrunt": terragrunt_form,
    "kubectl": kubectl_form,
    "oc": kubectl_form,
    "helm": helm_form,
    "pulumi": pulumi_form,
    "aws": aws_form,
    "gcloud": gcloud_form,
    "gsutil": gsutil_form,
    "bq": bq_form,
    "az": az_form,
    "aliyun": aliyun_form,
}

# Variables that load code into any of these programs (Go, Python, Node) or change the certificates it trusts.
CODE_AND_TRUST_VARIABLES = frozenset(
    {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP",
     "PYTHONUSERBASE", "PYTHONEXECUTABLE", "NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "BASH_ENV", "ENV",
     "PERL5LIB", "PERL5OPT", "RUBYOPT", "RUBYLIB", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
     "CURL_CA_BUNDLE", "GODEBUG"}
)  # fmt: skip
# Per program: the prefixes of the variables that configure it, and those of them a read may set.
Variables = tuple[tuple[str, ...], frozenset[str]]
TERRAFORM_VARIABLES: Variables = (
    ("TF_", "TOFU_"),
    frozenset({"TF_WORKSPACE", "TF_IN_AUTOMATION", "TF_INPUT", "TF_DATA_DIR"}),
)
KUBE_VARIABLES: Variables = (("KUBECTL_", "KUBECONFIG", "KUBERC"), frozenset())
CLOUDSDK_VARIABLES: Variables = (
    ("CLOUDSDK_", "BOTO_", "GOOGLE_"),
    frozenset({"CLOUDSDK_CORE_PROJECT", "CLOUDSDK_CORE_DISABLE_PROMPTS", "CLOUDSDK_COMPUTE_REGION",
               "CLOUDSDK_COMPUTE_ZONE", "GOOGLE_CLOUD_PROJECT"}),
)  # fmt: skip
PROGRAM_VARIABLES: dict[str, Variables] = {
    "terraform": TERRAFORM_VARIABLES,
    "tofu": TERRAFORM_VARIABLES,
    "terragrunt": (("TF_", "TOFU_", "TG_", "TERRAGRUNT_"), TERRAFORM_VARIABLES[1]),
    "kubectl": KUBE_VARIABLES,
    "oc": KUBE_VARIABLES,
    "helm": (("HELM_", "KUBECONFIG"), frozenset({"HELM_NAMESPACE"})),
    "pulumi": (("PULUMI_",), frozenset({"PULUMI_CONFIG_PASSPHRASE", "PULUMI_SKIP_UPDATE_CHECK"})),
    "aws": (
        ("AWS_",),
        frozenset(
            {
                "AWS_PROFILE",
                "AWS_REGION",
                "AWS_DEFAULT_REGION",
                "AWS_DEFAULT_OUTPUT",
                "AWS_PAGER",
                "AWS_CLI_AUTO_PROMPT",
                "AWS_MAX_ATTEMPTS",
                "AWS_RETRY_MODE",
            }
        ),
    ),
    "gcloud": CLOUDSDK_VARIABLES,
    "gsutil": CLOUDSDK_VARIABLES,
    "bq": CLOUDSDK_VARIABLES,
    "az": (("AZURE_",), frozenset({"AZURE_CORE_OUTPUT", "AZURE_CORE_ONLY_SHOW_ERRORS", "AZURE_CORE_NO_COLOR"})),
    "aliyun": (
        ("ALIBABA_CLOUD_", "ALICLOUD_", "ALIYUN_"),
        frozenset({"ALIBABA_CLOUD_PROFILE", "ALIBABA_CLOUD_REGION_ID"}),
    ),
}
# terraform folds TF_CLI_ARGS* into its arguments (read_only_tools reads them there); TF_VAR_* are input values
ARGUMENT_PREFIXES = ("TF_CLI_ARGS", "TF_VAR_")
PYTHON_FLAGS = frozenset({"-u", "-B", "-E", "-s", "-S", "-I", "-q"})


def is_read_only(argv: Sequence[str], env: Mapping[str, str], home: str | None = None) -> bool:
    """Whether this exact run (argv[0] the program) is a known read-only form that runs nothing the agent
    could have written; `home` is the user's home (for `~/.aws/cli/alias`; the run's HOME is read too)."""
    return read_only_form(argv, env, home) is ReadForm.PURE


def read_only_form(argv: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    """How this run reads, when it is a known read-only form; None when it is not one."""
    if not argv:
        return None
    program, args = _program(argv)
    form_of = READ_FORMS.get(program)
    if form_of is None or _environment_redirects(program, env):
        return None
    return form_of(args, env, home)


def _program(argv: Sequence[str]) -> tuple[str, Sequence[str]]:
    name = program_name(argv[0])
    name = CANONICAL_NAMES.get(name, name)
    if name == "python":  # `python3 -m awscli …` is the aws CLI
        args = list(argv[1:])
        while args and args[0] in PYTHON_FLAGS:
            args.pop(0)
        if args[:2] == ["-m", "awscli"] or args[:1] == ["-mawscli"]:
            return "aws", args[2:] if args[0] == "-m" else args[1:]
    return name, argv[1:]


def _environment_redirects(program: str, env: Mapping[str, str]) -> bool:
    prefixes, allowed = PROGRAM_VARIABLES.get(program, ((), frozenset()))
    for name, value in env.items():
        if value == os.environ.get(name) or name in allowed or name.startswith(ARGUMENT_PREFIXES):
            continue
        if name in CODE_AND_TRUST_VARIABLES or name.startswith(prefixes):
            return True
    return False
