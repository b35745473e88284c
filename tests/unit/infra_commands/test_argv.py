"""The rule on a program about to run (what a shim sees): changes_argv on exact argvs, approval_covers on
(approved line, argv) pairs, and the programs the shims stand in for."""

import pytest

from iac_code.infra_commands import GUARDED_PROGRAMS, approval_covers, changes_argv

CHANGING_ARGVS = [
    ["terraform", "apply"],
    ["/usr/local/bin/terraform", "apply", "-auto-approve"],
    ["/tmp/iac-shims/terraform", "destroy"],
    ["tofu", "apply"],
    ["terragrunt", "run-all", "apply"],
    ["kubectl", "-n", "get", "delete", "namespace", "prod"],
    ["kubectl", "apply", "--dry-run=client", "--dry-run=none", "-f", "x.yaml"],
    ["kubectl", "run", "x", "--image=y", "--", "--dry-run=client"],
    ["kubectl", "patch", "deploy", "web", "-p", '{"spec": {}}'],
    ["helm", "-n", "list", "uninstall", "r"],
    ["pulumi", "-C", "preview", "destroy", "--yes"],
    ["aws", "ec2", "terminate-instances", "--instance-ids", "i-1"],
    ["aws", "s3", "rm", "--recursive", "s3://bucket"],
    ["aws", "cloudformation", "deploy", "--stack-name", "s"],
    ["gcloud", "compute", "instances", "delete", "vm"],
    ["az", "group", "delete", "-n", "rg"],
    ["aliyun", "ecs", "DeleteInstance", "--InstanceId", "i"],
    ["cdk", "deploy"],
    ["cdktf", "deploy"],
    ["sam", "deploy"],
    ["microk8s", "kubectl", "delete", "ns", "x"],
    ["microk8s", "enable", "dns"],
    ["microk8s.kubectl", "delete", "ns", "x"],
    ["npx", "cdk", "deploy"],
    ["npx", "-y", "aws-cdk@2", "deploy"],
    ["npm", "exec", "--", "cdk", "deploy"],
    ["pnpm", "dlx", "cdktf-cli", "deploy"],
    ["yarn", "dlx", "cdk", "destroy"],
    ["bunx", "cdk", "deploy"],
    ["aws-vault", "exec", "prod", "--", "terraform", "apply"],
    ["kubectl", "delete", "pod", "$(literal)"],  # an argv word is final: nothing in it is expanded
]

HARMLESS_ARGVS = [
    [],
    ["terraform", "plan"],
    ["terraform", "-chdir=envs/prod", "plan", "-out", "tfplan"],
    ["terraform", "show", "-json", "tfplan"],
    ["terraform", "providers", "schema", "-json"],  # provider_schema runs these two under the guard
    ["tofu", "version", "-json"],
    ["kubectl", "get", "pods"],
    ["kubectl", "-n", "delete", "get", "pods"],
    ["kubectl", "apply", "--dry-run=server", "-f", "x.yaml"],
    ["kubectl", "apply", "--dry-run", "-f", "x.yaml"],
    ["helm", "template", "web", "./chart"],
    ["helm", "upgrade", "web", "./chart", "--dry-run=client"],
    ["pulumi", "preview"],
    ["aws", "s3", "ls"],
    ["aws", "s3", "cp", "s3://b/k", "."],
    ["aws", "ec2", "describe-instances"],
    ["gcloud", "compute", "instances", "list"],
    ["az", "group", "list"],
    ["aliyun", "ros", "ListStacks"],
    ["cdk", "synth"],
    ["microk8s", "kubectl", "get", "pods"],
    ["microk8s", "status"],
    ["npx", "prettier", "--write", "."],
    ["npm", "install"],
    ["yarn", "build"],
    ["make", "apply"],
    ["ls", "-la"],
    ["bash", "deploy.sh"],
]


@pytest.mark.parametrize("argv", CHANGING_ARGVS)
def test_changing_argv(argv: list[str]) -> None:
    assert changes_argv(argv) is True


@pytest.mark.parametrize("argv", HARMLESS_ARGVS)
def test_harmless_argv(argv: list[str]) -> None:
    assert changes_argv(argv) is False


COVERED = [
    # the command the line shows, by program name
    ("terraform apply", ["terraform", "apply"]),
    ("terraform apply", ["/usr/local/bin/terraform", "apply"]),
    ("./bin/terraform apply -auto-approve", ["terraform", "apply", "-auto-approve"]),
    ("cd envs/prod && terraform init && terraform apply", ["terraform", "apply"]),
    ("terraform plan -out p && terraform apply p", ["terraform", "apply", "p"]),
    ("kubectl patch deploy web -p '{\"a\": 1}'", ["kubectl", "patch", "deploy", "web", "-p", '{"a": 1}']),
    # words computed at run time stand for any words, the program included
    ('terraform apply -var "stamp=$(date)"', ["terraform", "apply", "-var", "stamp=Tue Dec 1"]),
    ("$TF apply", ["terraform", "apply"]),
    ("$TF apply", ["tofu", "apply"]),
    ("terraform $ACTION", ["terraform", "destroy", "-auto-approve"]),
    ("kubectl delete pod web-*", ["kubectl", "delete", "pod", "web-1", "web-2"]),
    ("kubectl delete pod web-*", ["kubectl", "delete", "pod"]),
    ("CMD='terraform apply'; $CMD", ["terraform", "apply"]),
    ("CMD='kubectl delete ns x'; terraform apply; $CMD", ["kubectl", "delete", "ns", "x"]),
    ('set -- terraform apply; "$@"', ["terraform", "apply"]),
    ("{terraform,apply}", ["terraform", "apply"]),
    ("$(echo terraform apply)", ["terraform", "apply"]),
    ("kubectl get pods -o name | xargs kubectl delete", ["kubectl", "delete", "pod/a", "pod/b"]),
    ("xargs -I{} kubectl delete pod {} < pods.txt", ["kubectl", "delete", "pod", "web-1"]),
    ("xargs -I % kubectl delete pod % < pods.txt", ["kubectl", "delete", "pod", "web-1"]),
    ("find . -name '*.yaml' -exec kubectl apply -f {} \\;", ["kubectl", "apply", "-f", "./a.yaml"]),
    # shells in shells, wrappers
    ("bash -c 'kubectl delete ns prod'", ["kubectl", "delete", "ns", "prod"]),
    ("bash -c \"bash -c 'helm uninstall web'\"", ["helm", "uninstall", "web"]),
    ("bash <<EOF\nterraform apply\nEOF", ["terraform", "apply"]),
    ("echo 'terraform apply' | sh", ["terraform", "apply"]),
    ("sudo -E terraform apply", ["terraform", "apply"]),
    ("aws-vault exec prod -- terraform apply", ["terraform", "apply"]),
    ("doppler run -- pulumi up --yes", ["pulumi", "up", "--yes"]),
    ("timeout 600 terraform apply", ["terraform", "apply"]),
    ("script -qc 'terraform apply' /dev/null", ["terraform", "apply"]),
    ("microk8s kubectl delete x", ["microk8s", "kubectl", "delete", "x"]),
    ("microk8s kubectl delete x", ["kubectl", "delete", "x"]),
    ("microk8s.kubectl delete x", ["microk8s", "kubectl", "delete", "x"]),
    ("npx aws-cdk@2 deploy", ["npx", "aws-cdk@2", "deploy"]),
    ("npx cdk deploy", ["cdk", "deploy"]),
    # what can be read of a line still covers what it shows
    ('terraform apply; bash -c "$X"', ["terraform", "apply"]),
]

NOT_COVERED = [
    ("terraform apply", ["terraform", "destroy"]),
    ("terraform apply", ["terraform", "apply", "-auto-approve"]),
    ("terraform apply", ["tofu", "apply"]),
    ("terraform apply", ["kubectl", "delete", "ns", "x"]),
    ("terraform apply && sh deploy.sh", ["kubectl", "delete", "ns", "x"]),
    ("terraform apply && ./deploy.sh", ["terraform", "destroy"]),
    ("terraform apply && make", ["helm", "uninstall", "web"]),
    ("terraform plan && terraform apply", ["terraform", "destroy"]),
    ("kubectl delete pod web-1", ["kubectl", "delete", "pod", "web-1", "web-2"]),
    ("xargs kubectl delete pod -Iweb-1", ["kubectl", "delete", "pod", "web-2"]),  # -I here is kubectl's word
    ("$TF apply", ["terraform", "destroy"]),
    ("kubectl delete pod $POD", ["kubectl", "delete", "ns", "prod"]),
    ("bash -c 'kubectl delete ns staging'", ["kubectl", "delete", "ns", "prod"]),
    ("ssh bastion terraform apply", ["terraform", "destroy"]),
    ("kubectl get pods", ["kubectl", "delete", "pod", "x"]),
    ("terragrunt apply", ["kubectl", "delete", "ns", "x"]),
    ("terraform apply", ["terragrunt", "apply"]),
    ("terraform apply; $CMD", ["kubectl", "delete", "ns", "x"]),  # $CMD spells nothing the line shows
    ("CMD='kubectl get pods'; terraform apply; $CMD", ["kubectl", "delete", "ns", "x"]),
    ("microk8s kubectl delete x", ["kubectl", "delete", "y"]),
    # a line that cannot be read shows no change: it covers none (guard/approvals.py asks each)
    ("terraform apply 'unterminated", ["kubectl", "delete", "ns", "prod"]),
    ("case $x in a) terraform apply;; esac", ["terraform", "destroy"]),
    ("case $x in a) terraform apply;; esac", ["terraform", "apply"]),
    ("x=(a); sh deploy.sh", ["terraform", "apply"]),
    ("for ((i=0; i<2; i++)); do sh deploy.sh; done", ["terraform", "apply"]),
    ('bash -c "$X"', ["terraform", "apply"]),
    ('terraform apply; bash -c "$X"', ["kubectl", "delete", "ns", "prod"]),
    # a driver's children are another program: which of their runs it covers is the guard's (guard/drivers.py)
    ("terragrunt run-all apply", ["terraform", "apply", "-input=false", "-auto-approve"]),
    ("cdktf deploy", ["terraform", "apply", "-auto-approve"]),
    ("helmfile -e prod apply", ["helm", "upgrade", "--install", "web", "./chart"]),
    ("x=(a) && terraform apply", ["terraform", "apply"]),
    ("terragrunt apply", ["terraform", "destroy", "-auto-approve"]),
    ("helmfile apply", ["helm", "uninstall", "web"]),
    # not changing: nothing to cover
    ("terraform apply", ["terraform", "plan"]),
    ("terraform apply", []),
]


@pytest.mark.parametrize(("line", "argv"), COVERED)
def test_approval_covers(line: str, argv: list[str]) -> None:
    assert approval_covers(line, argv) is True


@pytest.mark.parametrize(("line", "argv"), NOT_COVERED)
def test_approval_does_not_cover(line: str, argv: list[str]) -> None:
    assert approval_covers(line, argv) is False


def test_the_shims_stand_in_for_every_cli_the_issue_names() -> None:
    named = {"terraform", "tofu", "terragrunt", "kubectl", "helm", "pulumi", "aws", "aliyun", "cdk", "cdktf", "sam"}
    assert named | {"gcloud", "az", "microk8s", "oc", "ros-cdk"} <= GUARDED_PROGRAMS


def test_the_shims_stand_in_for_the_launchers_that_bypass_path() -> None:
    assert {"npx", "npm", "pnpm", "yarn", "bunx"} <= GUARDED_PROGRAMS


def test_no_shim_for_shell_alias_names() -> None:
    assert not {"tf", "k"} & GUARDED_PROGRAMS
