"""What approving a bash call's line covers of the runs its shims see: only what it showed (an unreadable
line nothing beyond itself), a driver only the same verb of its own children, in the directories the line
ran in or named, under the environment it showed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iac_code.guard.approvals import LineApproval
from iac_code.guard.channel import ShimRequest


def _run(cwd: str | Path, *argv: str, **env: str) -> ShimRequest:
    return ShimRequest(argv[0], str(cwd), list(argv[1:]), env)


def _covers(line: str, run: ShimRequest, cwd: str | Path = "/work", **env: str) -> bool:
    return LineApproval(line, cwd, env).uncovered(run) is None


# -- 1. a line that cannot be read approves nothing beyond itself -------------------------------------------

UNREADABLE = [
    "x=(a); sh deploy.sh",
    "case $1 in *) sh deploy.sh;; esac",
    "for ((i=0; i<1; i++)); do sh deploy.sh; done",
    'bash -c "$SCRIPT"',
    "terraform apply 'unterminated",
]


@pytest.mark.parametrize("line", UNREADABLE)
def test_an_unreadable_line_covers_no_change_its_scripts_make(line):
    approval = LineApproval(line, "/work", {})
    assert not approval.readable
    why = approval.uncovered(_run("/work", "terraform", "destroy", "-auto-approve"))
    assert why == "the approved line could not be read, so it approves nothing it did not show"
    assert approval.uncovered(_run("/work", "terraform", "apply")) is not None


def test_what_can_be_read_of_a_line_still_covers_what_it_shows():
    line = 'terraform apply; bash -c "$SCRIPT"'
    assert _covers(line, _run("/work", "terraform", "apply"))
    assert not _covers(line, _run("/work", "kubectl", "delete", "ns", "prod"))


# -- 2. a driver covers only the same verb of its own children ----------------------------------------------

DRIVEN = [
    ("terragrunt apply", ("terraform", "apply", "-input=false")),
    ("terragrunt apply", ("tofu", "apply")),
    ("terragrunt run-all apply", ("terraform", "apply", "-input=false", "-auto-approve")),
    ("terragrunt run --all -- apply", ("terraform", "apply", "-auto-approve")),
    ("terragrunt apply-all", ("terraform", "apply")),
    ("terragrunt destroy", ("terraform", "destroy")),
    ("terragrunt destroy-all", ("terraform", "destroy", "-auto-approve")),
    ("terragrunt apply -destroy", ("terraform", "destroy")),
    ("terragrunt state rm aws_s3_bucket.x", ("terraform", "state", "rm", "aws_s3_bucket.x")),
    ("terragrunt --terragrunt-non-interactive import a.b id", ("terraform", "import", "a.b", "id")),
    ("cdktf deploy", ("terraform", "apply", "-auto-approve")),
    ("cdktf apply --auto-approve", ("terraform", "apply")),
    ("cdktf destroy", ("terraform", "destroy", "-auto-approve")),
    ("helmfile apply", ("helm", "upgrade", "--install", "web", "./chart")),
    ("helmfile -e prod sync", ("helm", "--kube-context", "prod", "upgrade", "--install", "web", "./chart")),
    ("helmfile sync", ("helm", "install", "web", "./chart")),
    ("helmfile destroy", ("helm", "uninstall", "web")),
    ("helmfile delete", ("helm", "delete", "web")),
]

NOT_DRIVEN = [
    ("terragrunt apply", ("terraform", "destroy", "-auto-approve")),
    ("terragrunt apply", ("terraform", "apply", "-destroy")),
    ("terragrunt apply", ("terraform", "state", "rm", "aws_s3_bucket.x")),
    ("terragrunt apply", ("terraform", "import", "a.b", "id")),
    ("terragrunt run-all apply", ("terraform", "destroy")),
    ("terragrunt state rm a", ("terraform", "state", "mv", "a", "b")),
    ("terragrunt destroy", ("terraform", "apply")),
    ("terragrunt $COMMAND", ("terraform", "destroy")),
    ("terragrunt plan", ("terraform", "apply")),
    ("terragrunt apply", ("helm", "upgrade", "--install", "web", "./chart")),
    ("cdktf deploy", ("terraform", "destroy")),
    ("cdktf destroy", ("terraform", "apply")),
    ("helmfile apply", ("helm", "uninstall", "web")),
    ("helmfile apply", ("helm", "delete", "web")),
    ("helmfile sync", ("helm", "rollback", "web", "1")),
    ("helmfile destroy", ("helm", "upgrade", "--install", "web", "./chart")),
    ("helmfile apply", ("terraform", "apply")),
]


@pytest.mark.parametrize(("line", "argv"), DRIVEN)
def test_a_driver_covers_the_same_verb_of_its_children(line, argv):
    assert _covers(line, _run("/work", *argv))


@pytest.mark.parametrize(("line", "argv"), NOT_DRIVEN)
def test_a_driver_covers_no_other_verb(line, argv):
    assert LineApproval(line, "/work", {}).uncovered(_run("/work", *argv)) == "the approved line did not show it"


# -- 3. bound to the directories the line ran in or named ---------------------------------------------------


def test_an_approval_covers_the_same_argv_only_where_the_line_ran(tmp_path):
    here, there = tmp_path / "a", tmp_path / "b"
    here.mkdir(), there.mkdir()
    approval = LineApproval("terraform apply", here, {})
    assert approval.uncovered(_run(here, "terraform", "apply")) is None
    assert approval.uncovered(_run(there, "terraform", "apply")) == f"the approved line ran in {here}"
    assert approval.uncovered(_run(here / "sub", "terraform", "apply")) is not None  # not beneath, for itself


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("cd infra && terraform apply", "infra"),
        ("cd infra; cd prod && terraform apply", "infra/prod"),
        ("cd infra; cd ../prod && terraform apply", "prod"),
        ("pushd infra >/dev/null && terraform apply", "infra"),
        ("(cd infra && terraform apply)", "infra"),
        ("bash -c 'cd infra && terraform apply'", "infra"),
    ],
)
def test_the_directories_the_line_names_are_covered_too(tmp_path, line, where):
    assert _covers(line, _run(tmp_path / where, "terraform", "apply"), tmp_path)
    assert not _covers(line, _run(tmp_path / "elsewhere", "terraform", "apply"), tmp_path)


def test_a_directory_computed_at_run_time_is_named_by_nothing(tmp_path):
    assert not _covers('cd "$DIR" && terraform apply', _run(tmp_path / "prod", "terraform", "apply"), tmp_path)


def test_a_drivers_children_run_beneath_its_directory(tmp_path):
    cache = tmp_path / "live" / ".terragrunt-cache" / "x1" / "y2"
    line = "terragrunt --terragrunt-working-dir live apply"
    assert _covers(line, _run(cache, "terraform", "apply"), tmp_path)
    assert _covers("terragrunt run-all apply", _run(tmp_path / "vpc", "terraform", "apply"), tmp_path)
    assert _covers("cdktf deploy", _run(tmp_path / "cdktf.out" / "stacks" / "app", "terraform", "apply"), tmp_path)
    assert not _covers("terragrunt apply", _run(tmp_path.parent, "terraform", "apply"), tmp_path)


def test_a_terraform_chdir_names_its_directory(tmp_path):
    line = "terragrunt run-all apply; terraform -chdir=../other apply"
    assert _covers(line, _run(tmp_path.parent / "other" / "m", "terraform", "apply"), tmp_path)


def test_directories_compare_with_symlinks_resolved(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert _covers("terraform apply", _run(real, "terraform", "apply"), tmp_path / "link")


# -- 4. bound to the environment that changes what the run does ---------------------------------------------


@pytest.mark.parametrize("variable", ["TF_WORKSPACE", "TF_DATA_DIR", "KUBECONFIG", "AWS_PROFILE", "TG_TF_PATH"])
def test_a_run_under_another_environment_is_not_covered(variable):
    run = _run("/work", "terraform", "apply", **{variable: "prod"})
    assert _covers("terraform apply", run, **{variable: "prod"})
    why = LineApproval("terraform apply", "/work", {variable: "dev"}).uncovered(run)
    assert why == f"its environment differs from what the approved line showed: {variable}"
    assert not _covers("terraform apply", run)  # set by the command, not by the line


@pytest.mark.parametrize("variable", ["TF_CLI_ARGS", "TF_CLI_ARGS_apply"])
def test_arguments_from_tf_cli_args_are_covered_only_when_the_line_shows_them(variable):
    run = _run("/work", "terraform", "apply", **{variable: "-destroy"})
    assert not _covers("terraform apply", run, **{variable: "-destroy"}), "the call's environment is not shown"
    assert _covers(f"{variable}=-destroy terraform apply", run)


def test_a_value_the_line_assigns_is_shown():
    line = "TF_WORKSPACE=prod terraform apply"
    assert _covers(line, _run("/work", "terraform", "apply", TF_WORKSPACE="prod"))
    assert _covers(line, _run("/work", "terraform", "apply", TF_WORKSPACE="dev"), TF_WORKSPACE="dev")
    assert not _covers(line, _run("/work", "terraform", "apply", TF_WORKSPACE="stage"), TF_WORKSPACE="dev")
    exported = "export KUBECONFIG=./kc && kubectl apply -f x.yaml"
    assert _covers(exported, _run("/work", "kubectl", "apply", "-f", "x.yaml", KUBECONFIG="./kc"))
    nested = "bash -c 'TF_WORKSPACE=prod terraform apply'"
    assert _covers(nested, _run("/work", "terraform", "apply", TF_WORKSPACE="prod"))
    assert _covers("unset KUBECONFIG; kubectl apply -f x", _run("/work", "kubectl", "apply", "-f", "x"), KUBECONFIG="k")


def test_a_value_computed_at_run_time_is_not_shown():
    run = _run("/work", "terraform", "apply", TF_WORKSPACE="prod")
    assert not _covers('TF_WORKSPACE="$(cat ws)" terraform apply', run)


def test_what_does_not_change_the_run_is_not_compared():
    run = _run("/work", "terraform", "apply", TF_VAR_size="9", PWD="/work", SHLVL="3", TF_LOG="debug")
    assert _covers("terraform apply", run, TF_VAR_size="1")


def test_a_wrapper_that_loads_credentials_shows_whatever_credentials_it_gives():
    line = "aws-vault exec dev -- terraform apply"
    assert _covers(line, _run("/work", "terraform", "apply", AWS_ACCESS_KEY_ID="AKIA1", AWS_VAULT="dev"))
    assert not _covers(line, _run("/work", "terraform", "apply", TF_WORKSPACE="prod"))  # the others still count
    assert not _covers("terraform apply", _run("/work", "terraform", "apply", AWS_ACCESS_KEY_ID="AKIA1"))


def test_the_reason_names_variables_never_their_values():
    run = _run("/work", "terraform", "apply", AWS_SECRET_ACCESS_KEY="s3cr3t-value")
    why = LineApproval("terraform apply", "/work", {}).uncovered(run)
    assert why is not None and "AWS_SECRET_ACCESS_KEY" in why and "s3cr3t" not in why


def test_the_approvals_directory_is_the_calls_own():
    assert LineApproval("terraform apply", ".", {}).uncovered(_run(os.getcwd(), "terraform", "apply")) is None
