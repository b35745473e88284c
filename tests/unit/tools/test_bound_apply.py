"""Which bash lines are an apply bound to a reviewed plan (tools/bound_apply.py), and the flags they carry."""

from __future__ import annotations

import pytest

from iac_code.tools.bound_apply import BoundApply, NotBound, applies_terraform, bound_apply


def test_a_plain_apply_is_bound_and_auto_approve_and_input_are_dropped():
    assert bound_apply("terraform apply -auto-approve -input=false") == BoundApply("terraform", "apply", ".")


@pytest.mark.parametrize(
    ("line", "directory"),
    [
        ("cd net && terraform apply", "net"),
        ("cd envs && cd prod; terraform apply", "envs/prod"),
        ("cd net\nterraform apply", "net"),
        ("terraform -chdir=net apply", "net"),
        ("cd envs && terraform -chdir=prod apply", "envs/prod"),
        ("cd /srv/infra && /usr/local/bin/terraform apply", "/srv/infra"),
    ],
)
def test_the_directory_follows_cd_and_chdir(line, directory):
    bound = bound_apply(line)
    assert bound is not None and bound.directory == directory


def test_planning_flags_are_carried_in_both_spellings():
    bound = bound_apply(
        "terraform apply -target=terraform_data.a --target terraform_data.b -replace terraform_data.c "
        "-var 'name=two words' -var=x=1 -var-file=prod.tfvars -refresh=false"
    )
    assert bound is not None
    assert bound.targets == ["terraform_data.a", "terraform_data.b"]
    assert bound.replace == ["terraform_data.c"]
    assert bound.variables == {"name": "two words", "x": "1"}
    assert bound.var_files == ["prod.tfvars"] and bound.refresh is False and bound.destroy is False


def test_apply_options_go_to_the_apply_of_the_saved_plan():
    bound = bound_apply("terraform apply -lock=false -lock-timeout 30s -parallelism=4 -no-color -compact-warnings")
    assert bound is not None
    assert bound.apply_options == [
        "-lock=false",
        "-lock-timeout=30s",
        "-parallelism=4",
        "-no-color",
        "-compact-warnings",
    ]


@pytest.mark.parametrize("line", ["terraform destroy -auto-approve", "tofu apply -destroy"])
def test_destroy_either_way(line):
    bound = bound_apply(line)
    assert bound is not None and bound.destroy is True


def test_a_named_plan_file_is_kept_and_harmless_commands_are_listed_as_not_run():
    bound = bound_apply("terraform init -input=false && terraform fmt; terraform apply tfplan && terraform output")
    assert bound is not None
    assert bound.plan_file == "tfplan"
    assert bound.skipped == ["terraform init -input=false", "terraform fmt", "terraform output"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("terraform apply && kubectl delete pod web-0", "more than one change"),
        ("terraform apply && terraform destroy", "more than one change"),
        ("terraform apply | tee apply.log", "it uses `|`"),
        ("terraform apply > apply.log", "it uses `>`"),
        ("terraform apply || true", "it uses `||`"),
        ("terraform apply &", "it uses `&`"),
        ("(cd net && terraform apply)", "it uses `(`"),
        ("echo start && terraform apply", "`echo start` is neither cd nor a terraform/tofu command"),
        ("terraform apply && terraform state rm a.b", "more than one change"),
        ("terraform workspace select prod && terraform apply", "runs `terraform workspace select prod`"),
        ("terraform apply $FLAGS", "computed when it runs"),
        ("cd $DIR && terraform apply", "computed when it runs"),
        ("terraform apply -var-file=*.tfvars", "computed when it runs"),
        ("TF_LOG=debug terraform apply", "it sets TF_LOG for a command"),
        ("sudo terraform apply", "`sudo terraform apply` is neither cd nor"),  # a wrapper
        ("sh -c 'terraform apply'", "is neither cd nor a terraform/tofu command"),
        ("terraform apply -state=other.tfstate", "the option -state=other.tfstate cannot be carried"),
        ("terraform apply -destroy=false", "the option -destroy=false"),
        ("terraform apply -target", "-target has no value"),
        ("terraform apply tfplan -target=a.b", "planning options beside a saved plan"),
        ("terraform apply one.tfplan two.tfplan", "more than a plan file"),
        ("terraform destroy tfplan", "more than a plan file"),
        ("terraform -version apply", "option -version cannot be carried"),
        ("cd && terraform apply", "`cd` leads to a directory that cannot be told"),
        ("terraform apply 'unclosed", "cannot be read"),
    ],
)
def test_lines_that_are_not_bound_say_why(line, why):
    with pytest.raises(NotBound) as raised:
        bound_apply(line)
    assert why in str(raised.value)


@pytest.mark.parametrize(
    ("line", "applies"),
    [
        ("terraform apply | tee log", True),
        ("kubectl delete pod x && terraform -chdir=net destroy", True),
        ("kubectl delete pod x", False),
        ("terraform import a.b id", False),
        ("$TF apply", False),  # no program to tell: asked as any change is
    ],
)
def test_which_changes_are_terraform_applies(line, applies):
    assert applies_terraform(line) is applies
