"""The classifier's gaps issue 36 found (item 8), one test each: the line rule and changes_argv call each
of these a change; each was judged harmless before."""

import pytest

from iac_code.infra_commands import GUARDED_PROGRAMS, approval_covers, changes_argv, is_infrastructure_change


@pytest.mark.parametrize(
    "line",
    [
        "kubectl --cache-dir --dry-run=server delete namespace prod",
        "kubectl --context --dry-run=client apply -f x.yaml",
        "kubectl delete ns prod -l --dry-run=server",
    ],
)
def test_a_kubectl_flags_value_is_no_dry_run(line: str) -> None:
    assert is_infrastructure_change(line) is True


def test_a_helm_flags_value_is_no_dry_run() -> None:
    assert is_infrastructure_change("helm --kube-context --dry-run upgrade web ./chart") is True


@pytest.mark.parametrize(
    "line", ["kubectl apply --server-side --dry-run=server -f x.yaml", "helm upgrade --install --dry-run web ./c"]
)
def test_a_dry_run_after_a_flag_is_still_one(line: str) -> None:
    assert is_infrastructure_change(line) is False


@pytest.mark.parametrize("line", ["pulumi down --yes", "pulumi dn"])
def test_pulumi_destroys_aliases(line: str) -> None:
    assert is_infrastructure_change(line) is True


def test_terraform_env_delete() -> None:
    assert is_infrastructure_change("terraform env delete staging") is True


@pytest.mark.parametrize(
    "line",
    [
        'TF_CLI_ARGS="apply -auto-approve" terraform',
        'export TF_CLI_ARGS="destroy -auto-approve"; terraform',
        "TF_CLI_ARGS_state='rm aws_instance.web' terraform state",
        "env TF_CLI_ARGS=apply terraform",
        'export TF_CLI_ARGS="apply -auto-approve"\ncd envs && bash -c terraform',
        'TF_CLI_ARGS="$ARGS" terraform',
        "TF_CLI_ARGS=apply tofu",
    ],
)
def test_terraform_arguments_set_on_the_line(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line", ['TF_CLI_ARGS="-no-color" terraform plan', "TF_CLI_ARGS_plan=-lock=false terraform plan"]
)
def test_terraform_arguments_that_change_nothing(line: str) -> None:
    assert is_infrastructure_change(line) is False


def test_terraform_arguments_from_the_runs_environment() -> None:
    assert changes_argv(["terraform"], env={"TF_CLI_ARGS": "apply -auto-approve"}) is True
    assert changes_argv(["terraform", "state"], env={"TF_CLI_ARGS_state": "rm x"}) is True
    assert changes_argv(["terraform", "plan"], env={"TF_CLI_ARGS": "-no-color"}) is False
    assert changes_argv(["terraform"]) is False


def test_an_approval_covers_the_arguments_the_environment_adds_only_when_the_line_showed_them() -> None:
    env = {"TF_CLI_ARGS": "-auto-approve"}
    assert approval_covers('TF_CLI_ARGS="-auto-approve" terraform apply', ["terraform", "apply"], env=env) is True
    assert approval_covers("terraform apply", ["terraform", "apply"], env=env) is False
    assert approval_covers("terraform plan", ["terraform"], env={"TF_CLI_ARGS": "destroy"}) is False


@pytest.mark.parametrize(
    "line",
    [
        "gcloud secrets versions destroy 3 --secret s",
        "gcloud billing projects unlink p",
        "gcloud billing projects link p --billing-account a",
    ],
)
def test_gcloud_verbs(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line",
    ["az vm open-port -g rg -n vm --port 22", "az resource invoke-action --action powerOff --ids x"],
)
def test_az_verbs(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line", ["terragrunt backend delete", "terragrunt backend migrate a b", "terragrunt backend bootstrap"]
)
def test_terragrunt_backend(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line",
    [
        "kubectl exec web -- rm -rf /data",
        "kubectl cp ./payload web:/tmp/p",
        "kubectl debug node/n1 -it --image=busybox",
        "kubectl attach web -i",
        "kubectl port-forward svc/db 5432",
        "kubectl proxy --port 8001",
        "oc rsh web",
        "oc rsync ./dir web:/tmp",
    ],
)
def test_kubectl_verbs_that_act_in_the_cluster(line: str) -> None:
    assert is_infrastructure_change(line) is True


def test_gsutil_and_bq_are_guarded() -> None:
    assert {"gsutil", "bq"} <= GUARDED_PROGRAMS


@pytest.mark.parametrize(
    "line",
    [
        "gsutil rm -r gs://bucket",
        "gsutil -m cp -r ./site gs://bucket",
        "gsutil rsync -d ./dir gs://bucket",
        "gsutil iam ch allUsers:objectViewer gs://bucket",
        "gsutil mb gs://bucket",
        "bq rm -f dataset.table",
        "bq --project_id p mk dataset",
        "bq query 'DELETE FROM d.t WHERE true'",
        "bq load d.t gs://b/f.csv",
    ],
)
def test_gsutil_and_bq_changes(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line", ["gsutil ls gs://bucket", "gsutil cp gs://bucket/o .", "gsutil iam get gs://b", "bq ls", "bq show d.t"]
)
def test_gsutil_and_bq_reads(line: str) -> None:
    assert is_infrastructure_change(line) is False


@pytest.mark.parametrize(
    "argv",
    [
        ["python3", "-m", "awscli", "ec2", "terminate-instances", "--instance-ids", "i-1"],
        ["/usr/bin/python3.11", "-u", "-m", "awscli", "s3", "rm", "s3://b/k"],
        ["python", "-mawscli", "cloudformation", "delete-stack", "--stack-name", "s"],
    ],
)
def test_python_running_the_aws_cli(argv: list[str]) -> None:
    assert changes_argv(argv) is True
    assert is_infrastructure_change(" ".join(argv)) is True


def test_the_gcloud_sdks_versioned_kubectl() -> None:
    assert is_infrastructure_change("/opt/google-cloud-sdk/bin/kubectl.1.33 delete ns prod") is True


@pytest.mark.parametrize(
    "line",
    [
        "gcloud sql export csv inst gs://b/f.csv --query 'select 1'",  # a leaf under the group `sql export`
        "gcloud pubsub subscriptions seek s --time 2020-01-01",
        "gcloud resource-manager org-policies deny constraints/x v --project p",
        "gcloud deploy releases abandon r --delivery-pipeline p",
        "gcloud beta compute scp f vm:/tmp",
        "gcloud compute instances add-metadata vm --metadata k=v",
        "gcloud compute instance-groups managed rolling-action start-update g --version template=t",
    ],
)
def test_gcloud_leaves_by_its_command_tree(line: str) -> None:
    assert is_infrastructure_change(line) is True


@pytest.mark.parametrize(
    "line",
    [
        "gcloud run services list",
        "gcloud sql instances describe db",
        "gcloud logging read 'severity>=ERROR' --limit 10",
        "gcloud alpha container clusters get-credentials c --zone z",
    ],
)
def test_gcloud_reads_by_its_command_tree(line: str) -> None:
    assert is_infrastructure_change(line) is False


@pytest.mark.parametrize(
    "argv",
    [
        ["aws", "apigateway", "generate-client-certificate"],
        ["aws", "cognito-identity", "get-id", "--identity-pool-id", "p"],
        ["aws", "marketplacecommerceanalytics", "generate-data-set", "--data-set-type", "t"],
    ],
)
def test_aws_operations_named_like_reads_that_create(argv: list[str]) -> None:
    assert changes_argv(argv) is True
