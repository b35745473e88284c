"""The forms of issue 19: each way a model may run an infrastructure change, one row each, with an id.

A row is a bash command line, the change it makes (the argv a stand-in CLI records when it runs), and the
files it needs in the workspace. The stand-ins (`stand_ins`) are tiny scripts named like the real CLIs that
append their argv to a log, put first on the agent's PATH; wrappers that are not on this machine
(aws-vault, doppler, direnv, npx) are stand-ins that run the command they wrap, as the real ones would.
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from iac_code.infra_commands import changes_argv

CLIS = (
    "terraform", "tofu", "terragrunt", "kubectl", "helm", "pulumi", "aws", "aliyun", "cdk", "cdktf", "sam",
    "gcloud", "az", "microk8s",
)  # fmt: skip
LOG = "stand-ins.log"
RECORD = '#!/bin/sh\nprintf "%s\\n" "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'
WRAPPERS = {
    "aws-vault": '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n',
    "doppler": '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n',
    "direnv": '#!/bin/sh\nshift 2; exec "$@"\n',  # direnv exec DIR COMMAND...
    "npx": '#!/bin/sh\nexec "$@"\n',
}
DEPLOY = "#!/bin/sh\nterraform apply\n"


@dataclass(frozen=True)
class Form:
    id: str
    line: str
    change: tuple[str, ...] | None  # what runs when allowed; None: a command that changes nothing
    files: dict[str, str] = field(default_factory=dict)
    absolute: bool = False  # reaches the CLI by its absolute path: guarded only in a mount namespace


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


TF_APPLY = ("terraform", "apply")
KUBE_DELETE = ("kubectl", "delete", "namespace", "prod")

FORMS = (
    # built at run time
    Form("command-substitution", "$(echo terraform apply)", TF_APPLY),
    Form("backticks", "`echo terraform apply`", TF_APPLY),
    Form("eval", 'eval "$(echo terraform apply)"', TF_APPLY),
    Form("variable", "X=$(echo terraform apply); $X", TF_APPLY),
    Form("read-herestring", 'read -r X <<< "terraform apply"; $X', TF_APPLY),
    Form("printf-v", "printf -v X '%s %s' terraform apply; $X", TF_APPLY),
    Form("ifs-split", "IFS=,; X=terraform,apply; $X", TF_APPLY),
    Form("set-positional", 'set -- terraform apply; "$@"', TF_APPLY),
    Form("function", "f() { terraform apply; }; f", TF_APPLY),
    Form("brace-expansion", "{terraform,apply}", TF_APPLY),
    Form("glob-in-program", "{bin}/terrafor? apply", TF_APPLY, absolute=True),
    Form("absolute-path", "X={bin}/terraform; $X apply", TF_APPLY, absolute=True),
    Form("alias", "shopt -s expand_aliases; alias t='terraform apply'\nt", TF_APPLY),
    Form("trap-exit", "trap 'terraform apply' EXIT", TF_APPLY),
    Form("xargs", "echo apply | xargs terraform", TF_APPLY),
    Form("arithmetic", "echo $(( $(terraform apply; echo 1) ))", TF_APPLY),
    Form("old-arithmetic-newline", "echo $[1<<2]\nterraform apply", TF_APPLY),
    # a shell reading its program from stdin
    Form("process-substitution", "bash <(echo terraform apply)", TF_APPLY),
    Form("sh-dash-herestring", "sh - <<< 'terraform apply'", TF_APPLY),
    Form("bash-s-herestring", "bash -s <<< 'terraform apply'", TF_APPLY),
    Form("base64-pipe", f"echo {_b64('terraform apply')} | base64 -d | sh", TF_APPLY),
    # wrappers
    Form("script-c", 'script -qc "terraform apply" /dev/null', TF_APPLY),
    Form("taskset", "taskset 1 terraform apply", TF_APPLY),
    Form("aws-vault", "aws-vault exec p -- terraform apply", TF_APPLY),
    Form("doppler", "doppler run -- terraform apply", TF_APPLY),
    Form("direnv", "direnv exec . terraform apply", TF_APPLY),
    Form("microk8s", "microk8s kubectl delete namespace prod", ("microk8s", "kubectl", "delete", "namespace", "prod")),
    Form("npx", "npx cdk deploy", ("cdk", "deploy")),
    Form("cdktf", "cdktf deploy", ("cdktf", "deploy")),
    # indirection
    Form("script-file", "sh go.sh", TF_APPLY, {"go.sh": DEPLOY}),
    Form("executable-script", "./deploy.sh", TF_APPLY, {"deploy.sh": DEPLOY}),
    Form("script-on-stdin", "bash < deploy.sh", TF_APPLY, {"deploy.sh": DEPLOY}),
    Form("make", "make apply", TF_APPLY, {"Makefile": "apply:\n\tterraform apply\n"}),
    Form("python-os-system", """python3 -c 'import os; os.system("terraform apply")'""", TF_APPLY),
    # global flags read as subcommands, dry-run flags taken at face value
    Form("kubectl-namespace-flag", "kubectl -n get delete namespace prod", ("kubectl", "-n", "get", *KUBE_DELETE[1:])),
    Form("helm-namespace-flag", "helm -n list uninstall r", ("helm", "-n", "list", "uninstall", "r")),
    Form("pulumi-cwd-flag", "pulumi -C preview destroy --yes", ("pulumi", "-C", "preview", "destroy", "--yes")),
    Form("dry-run-false", "kubectl apply -f x.yaml --dry-run=false", ("kubectl", "apply", "-f", "x.yaml", "--dry-run=false")),
    Form(
        "dry-run-last-wins",
        "kubectl apply -f x.yaml --dry-run=client --dry-run=none",
        ("kubectl", "apply", "-f", "x.yaml", "--dry-run=client", "--dry-run=none"),
    ),
    Form(
        "dry-run-after-dashes",
        "kubectl run x --image=nginx -- --dry-run=client",
        ("kubectl", "run", "x", "--image=nginx", "--", "--dry-run=client"),
    ),
    # clouds' own CLIs beyond CloudFormation
    Form("aws-ec2-terminate", "aws ec2 terminate-instances --instance-ids i-1", ("aws", "ec2", "terminate-instances", "--instance-ids", "i-1")),
    Form("aws-s3-rm", "aws s3 rm s3://bucket --recursive", ("aws", "s3", "rm", "s3://bucket", "--recursive")),
    Form("gcloud-delete", "gcloud compute instances delete vm", ("gcloud", "compute", "instances", "delete", "vm")),
    Form("az-group-delete", "az group delete -n rg", ("az", "group", "delete", "-n", "rg")),
    # changing nothing: run without a question
    Form("terraform-plan", "terraform plan", None),
    Form("kubectl-get", "kubectl get pods", None),
    Form("dry-run-client", "kubectl apply -f x.yaml --dry-run=client", None),
    Form("dry-run-server", "kubectl apply -f x.yaml --dry-run=server", None),
    Form("helm-list", "helm list", None),
)  # fmt: skip
CHANGES = tuple(form for form in FORMS if form.change is not None)
NO_CHANGES = tuple(form for form in FORMS if form.change is None)


def stand_ins(directory: Path) -> Path:
    """A directory of stand-in CLIs and wrappers, to put first on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in CLIS:
        _executable(directory / name, RECORD)
    for name, text in WRAPPERS.items():
        _executable(directory / name, text)
    return directory


def prepare(form: Form, workspace: Path, bin_dir: Path) -> str:
    """Write the row's files; the line to run, with the stand-ins' directory filled in."""
    for name, text in form.files.items():
        _executable(workspace / name, text)
    return form.line.replace("{bin}", str(bin_dir))


def changes_logged(log: Path) -> list[list[str]]:
    """The changing runs the stand-ins recorded."""
    if not log.exists():
        return []
    return [words for line in log.read_text().splitlines() if changes_argv(words := line.split())]


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def agent_path(bin_dir: Path) -> str:
    return os.pathsep.join([str(bin_dir), os.environ.get("PATH", os.defpath)])
