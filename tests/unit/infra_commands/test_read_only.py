"""is_read_only / read_only_form: the allow-list of each CLI's read-only forms, on exact argvs and their
environment, with the red-team forms of issue 36 (TF_CLI_ARGS, a flag's value read as a dry run, aliases,
plugins, credentials printed by a "read")."""

import os
from pathlib import Path

import pytest

from iac_code.infra_commands import ReadForm, is_read_only, read_only_form

PURE = [
    # terraform / tofu: the forms that run nothing of the workspace
    ["terraform", "version"],
    ["terraform", "-version"],
    ["terraform", "version", "-json"],
    ["/usr/local/bin/terraform1.5", "version"],
    ["terraform", "fmt", "-check", "-recursive"],
    ["terraform", "-chdir=envs/prod", "fmt", "-check"],
    ["terraform", "fmt", "-list=false", "main.tf"],
    ["terraform", "workspace", "show"],
    ["tofu", "fmt", "-check"],
    # kubectl / oc: value-taking global flags consume their value
    ["kubectl", "get", "pods"],
    ["kubectl", "get", "pods", "-o", "jsonpath={.items[*].metadata.name}"],
    ["kubectl", "get", "pods", "-ojsonpath={.items[0].metadata.name}"],
    ["kubectl", "--cache-dir", "/tmp/k", "--context", "prod", "-n", "web", "get", "deploy", "-A"],
    ["kubectl", "-nprod", "describe", "pod", "web-1"],
    ["kubectl", "-n", "delete", "get", "pods"],  # the namespace is called "delete"
    ["kubectl", "logs", "deploy/web", "-c", "app", "--tail", "100"],
    ["kubectl", "explain", "pods.spec"],
    ["kubectl", "api-resources"],
    ["kubectl", "api-versions"],
    ["kubectl", "version"],
    ["kubectl", "cluster-info"],
    ["kubectl", "top", "pods"],
    ["kubectl", "auth", "can-i", "delete", "pods"],
    ["kubectl", "config", "view"],
    ["kubectl", "config", "get-contexts"],
    ["kubectl", "config", "current-context"],
    ["kubectl", "diff", "-f", "deploy.yaml"],
    ["kubectl", "rollout", "status", "deploy/web"],
    ["/usr/bin/kubectl", "get", "ns"],
    ["oc", "get", "pods"],
    # helm
    ["helm", "list", "-A"],
    ["helm", "-n", "prod", "status", "web"],
    ["helm", "--kube-context", "prod", "get", "values", "web"],
    ["helm", "history", "web"],
    ["helm", "show", "values", "oci://registry.example/charts/web"],
    ["helm", "template", "web", "./chart", "-f", "values.yaml", "--set", "a=b"],
    ["helm", "search", "repo", "nginx"],
    ["helm", "version"],
    ["helm", "lint", "./chart"],
    # pulumi
    ["pulumi", "version"],
    # aws
    ["aws", "sts", "get-caller-identity"],
    ["aws", "s3", "ls"],
    ["aws", "s3", "ls", "s3://bucket/prefix/"],
    ["aws", "--profile", "prod", "--region", "eu-west-1", "--output", "json", "ec2", "describe-instances"],
    ["aws", "ec2", "describe-instances", "--filters", "Name=tag:env,Values=prod", "--query", "Reservations[]"],
    ["aws", "iam", "list-roles"],
    ["aws", "s3api", "head-object", "--bucket", "b", "--key", "k"],
    ["aws", "cloudformation", "get-template", "--stack-name", "s"],
    ["aws", "ec2", "wait", "instance-running"],
    ["aws", "logs", "tail", "/aws/lambda/f"],
    ["aws", "ssm", "get-parameter", "--name", "p"],
    ["python3", "-m", "awscli", "ec2", "describe-vpcs"],
    # gcloud, gsutil, bq
    ["gcloud", "compute", "instances", "list"],
    ["gcloud", "compute", "instances", "describe", "vm", "--zone", "z"],
    ["gcloud", "--project", "p", "container", "clusters", "list", "--format", "json"],
    ["gcloud", "beta", "run", "services", "describe", "web"],
    ["gcloud", "projects", "get-iam-policy", "p"],
    ["gsutil", "ls", "gs://bucket"],
    ["gsutil", "iam", "get", "gs://bucket"],
    ["bq", "ls", "--project_id", "p"],
    ["bq", "show", "dataset.table"],
    # az
    ["az", "vm", "list"],
    ["az", "group", "show", "-n", "rg"],
    ["az", "--subscription", "s", "network", "vnet", "subnet", "list", "-g", "rg", "--vnet-name", "v"],
    ["az", "aks", "show", "-g", "rg", "-n", "c", "-o", "json"],
    # aliyun (ROS included)
    ["aliyun", "ecs", "DescribeInstances"],
    ["aliyun", "--profile", "prod", "ros", "ListStacks"],
    ["aliyun", "ros", "GetStack", "--StackId", "s"],
    ["aliyun", "ecs", "describe-instances"],
    ["aliyun", "sts", "GetCallerIdentity"],
    ["aliyun", "oss", "ls", "oss://bucket"],
]

RUNS_WORKSPACE_CODE = [
    ["terraform", "plan"],
    ["terraform", "plan", "-out=tfplan"],
    ["terraform", "plan", "-out", "tfplan", "-var", "a=b", "-lock=false", "-input=false"],
    ["terraform", "-chdir=envs/prod", "plan", "-destroy"],
    ["terraform", "show", "-json", "tfplan"],
    ["terraform", "output", "-raw", "vpc_id"],
    ["terraform", "state", "list"],
    ["terraform", "state", "show", "aws_instance.web"],
    ["terraform", "providers", "schema", "-json"],
    ["terraform", "validate", "-json"],
    ["terraform", "init", "-backend=false"],
    ["terraform", "workspace", "list"],
    ["tofu", "plan"],
    ["terragrunt", "plan"],
    ["terragrunt", "run-all", "plan"],
    ["terragrunt", "run", "--all", "--", "plan"],
    ["terragrunt", "--working-dir", "envs/prod", "output", "-json"],
    ["pulumi", "preview"],
    ["pulumi", "-C", "infra", "preview", "--stack", "dev"],
    ["pulumi", "stack", "ls"],
    ["pulumi", "stack", "output", "url"],
]

NOT_READ_ONLY = [
    [],
    # unknown programs, other names of a CLI
    ["tfw", "plan"],  # a symlink to terraform under another name
    ["make", "plan"],
    # terraform: changing, unknown, options out of the table
    ["terraform"],
    ["terraform", "apply"],
    ["terraform", "destroy", "-auto-approve"],
    ["terraform", "state", "rm", "x"],
    ["terraform", "env", "delete", "staging"],
    ["terraform", "workspace", "select", "prod"],
    ["terraform", "console"],
    ["terraform", "test"],
    ["terraform", "init", "-migrate-state"],
    ["terraform", "init", "-force-copy"],
    ["terraform", "plan", "-unknown-flag"],
    ["terraform", "plan", "apply"],
    ["terraform", "-no-color", "plan"],
    ["terraform", "-chdir", "envs", "plan"],
    ["terraform", "plan", "-out"],
    ["terragrunt", "apply"],
    ["terragrunt", "run-all", "destroy"],
    ["terragrunt", "--tf-path", "/tmp/x", "plan"],
    ["terragrunt", "backend", "delete"],
    # kubectl: a flag's value is no dry run, changing verbs, plugins, credentials printed or sent elsewhere
    ["kubectl", "--cache-dir", "--dry-run=server", "delete", "namespace", "prod"],
    ["kubectl", "delete", "pod", "x", "--dry-run=server"],
    ["kubectl", "apply", "-f", "x.yaml"],
    ["kubectl", "exec", "web", "--", "ls"],
    ["kubectl", "cp", "web:/etc/passwd", "p"],
    ["kubectl", "debug", "web", "-it", "--image=busybox"],
    ["kubectl", "attach", "web"],
    ["kubectl", "port-forward", "web", "8080"],
    ["kubectl", "proxy"],
    ["kubectl", "foo"],  # the plugin kubectl-foo
    ["kubectl", "get", "secrets", "-o", "yaml"],
    ["kubectl", "get", "secret/db", "-o", "jsonpath={.data}"],
    ["kubectl", "get", "-f", "objects.yaml"],
    ["kubectl", "config", "view", "--raw"],
    ["kubectl", "config", "view", "--flatten"],
    ["kubectl", "config", "use-context", "prod"],
    ["kubectl", "cluster-info", "dump"],
    ["kubectl", "--server", "https://elsewhere", "get", "pods"],
    ["kubectl", "get", "pods", "--server=https://elsewhere"],
    ["kubectl", "get", "pods", "-s", "https://elsewhere"],
    ["kubectl", "get", "pods", "-As", "https://elsewhere"],
    ["kubectl", "--kubeconfig", "mine.yaml", "get", "pods"],
    ["kubectl", "--token", "t", "get", "pods"],
    ["kubectl", "--unknown-flag", "get", "pods"],
    ["kubectl", "-n"],
    ["kubectl", "kustomize", "--enable-exec", "."],
    ["kubectl", "auth", "reconcile", "-f", "rbac.yaml"],
    # helm
    ["helm", "install", "web", "./chart"],
    ["helm", "upgrade", "web", "./chart", "--dry-run"],
    ["helm", "diff", "upgrade", "web", "./chart"],  # a plugin
    ["helm", "template", "web", "./chart", "--post-renderer", "./render.sh"],
    ["helm", "template", "web", "s3://charts/web"],  # a downloader plugin
    ["helm", "--kube-apiserver", "https://elsewhere", "list"],
    ["helm", "--kube-token", "t", "list"],
    ["helm", "get", "password"],
    ["helm", "env"],
    # pulumi
    ["pulumi", "up"],
    ["pulumi", "down"],
    ["pulumi", "dn"],
    ["pulumi", "destroy"],
    ["pulumi", "stack", "rm", "dev"],
    ["pulumi", "stack", "output", "--show-secrets"],
    ["pulumi", "config", "get", "dbPassword"],
    # aws: credentials handed out, changing operations, options and aliases
    ["aws", "ec2", "terminate-instances", "--instance-ids", "i-1"],
    ["aws", "secretsmanager", "get-secret-value", "--secret-id", "s"],
    ["aws", "ssm", "get-parameter", "--name", "p", "--with-decryption"],
    ["aws", "sts", "get-session-token"],
    ["aws", "sts", "assume-role", "--role-arn", "a", "--role-session-name", "s"],
    ["aws", "ecr", "get-login-password"],
    ["aws", "ecr", "get-authorization-token"],
    ["aws", "eks", "get-token", "--cluster-name", "c"],
    ["aws", "rds", "generate-db-auth-token", "--hostname", "h"],
    ["aws", "ec2", "get-password-data", "--instance-id", "i-1"],
    ["aws", "cognito-identity", "get-id", "--identity-pool-id", "p"],
    ["aws", "configure", "get", "aws_secret_access_key"],
    ["aws", "configure", "export-credentials"],
    ["aws", "s3", "cp", "s3://b/k", "."],
    ["aws", "s3", "presign", "s3://b/k"],
    ["aws", "kms", "decrypt", "--ciphertext-blob", "fileb://x"],
    ["aws", "--endpoint-url", "http://127.0.0.1:9", "sts", "get-caller-identity"],
    ["aws", "ec2", "describe-instances", "--debug"],
    ["aws", "--unknown", "ec2", "describe-instances"],
    ["aws", "describe-all"],
    ["python3", "-c", "import awscli"],
    # gcloud, gsutil, bq
    ["gcloud", "compute", "ssh", "list"],  # ssh to an instance called "list"
    ["gcloud", "builds", "submit", "list"],
    ["gcloud", "compute", "instances", "delete", "vm"],
    ["gcloud", "auth", "print-access-token"],
    ["gcloud", "config", "config-helper"],
    ["gcloud", "secrets", "versions", "access", "latest", "--secret", "s"],
    ["gcloud", "compute", "instances", "list", "--log-http"],
    ["gcloud", "compute", "instances", "list", "--verbosity", "debug"],
    ["gcloud", "--flags-file", "f.yaml", "compute", "instances", "list"],
    ["gsutil", "rm", "gs://b/o"],
    ["gsutil", "iam", "set", "p.json", "gs://b"],
    ["gsutil", "signurl", "key.json", "gs://b/o"],
    ["bq", "query", "SELECT 1"],
    ["bq", "rm", "-f", "dataset.table"],
    # az
    ["az", "vm", "open-port", "-g", "rg", "-n", "vm", "--port", "22"],
    ["az", "resource", "invoke-action", "--action", "powerOff", "--ids", "x"],
    ["az", "storage", "account", "keys", "list", "-n", "a"],
    ["az", "keyvault", "secret", "show", "--name", "s", "--vault-name", "v"],
    ["az", "acr", "credential", "show", "-n", "r"],
    ["az", "account", "get-access-token"],
    ["az", "vm", "list", "--debug"],
    ["az", "list"],
    # aliyun
    ["aliyun", "ecs", "DeleteInstance", "--InstanceId", "i"],
    ["aliyun", "kms", "GetSecretValue", "--SecretName", "s"],
    ["aliyun", "cs", "DescribeClusterUserKubeconfig", "--ClusterId", "c"],
    ["aliyun", "cs", "GET", "/k8s/c/user_config"],
    ["aliyun", "--endpoint", "http://elsewhere", "ecs", "DescribeInstances"],
    ["aliyun", "oss", "cp", "oss://b/k", "."],
]


@pytest.mark.parametrize("argv", PURE)
def test_pure_read(argv: list[str]) -> None:
    assert read_only_form(argv, {}) is ReadForm.PURE
    assert is_read_only(argv, {}) is True


@pytest.mark.parametrize("argv", RUNS_WORKSPACE_CODE)
def test_read_that_runs_workspace_code(argv: list[str]) -> None:
    assert read_only_form(argv, {}) is ReadForm.RUNS_WORKSPACE_CODE
    assert is_read_only(argv, {}) is False


@pytest.mark.parametrize("argv", NOT_READ_ONLY)
def test_not_read_only(argv: list[str]) -> None:
    assert read_only_form(argv, {}) is None
    assert is_read_only(argv, {}) is False


TF_ENVIRONMENTS = [
    # TF_CLI_ARGS names the subcommand when the command line names none
    (["terraform"], {"TF_CLI_ARGS": "apply -auto-approve"}, None),
    (["terraform"], {"TF_CLI_ARGS": "destroy -auto-approve"}, None),
    (["terraform", "-no-color"], {"TF_CLI_ARGS": "apply"}, None),
    (["terraform", "state"], {"TF_CLI_ARGS_state": "rm x"}, None),
    (["terraform", "plan"], {"TF_CLI_ARGS": "apply -auto-approve"}, None),
    (["terraform", "plan"], {"TF_CLI_ARGS_plan": "-out=x -unknown"}, None),
    (["terraform", "plan"], {"TF_CLI_ARGS": "'unclosed"}, None),
    (["terraform"], {"TF_CLI_ARGS_": "version"}, ReadForm.PURE),
    (["terraform"], {"TF_CLI_ARGS": "fmt -check"}, ReadForm.PURE),
    (["terraform", "state"], {"TF_CLI_ARGS_state": "list"}, ReadForm.RUNS_WORKSPACE_CODE),
    (["terraform", "plan"], {"TF_CLI_ARGS_plan": "-lock-timeout=30s -no-color"}, ReadForm.RUNS_WORKSPACE_CODE),
    (["terraform", "plan"], {"TF_WORKSPACE": "staging", "TF_VAR_region": "eu"}, ReadForm.RUNS_WORKSPACE_CODE),
    (["terragrunt", "state"], {"TF_CLI_ARGS_state": "rm x"}, None),
    (["terraform", "plan"], {"TF_REATTACH_PROVIDERS": "{}"}, None),
    (["terraform", "version"], {"TF_CLI_CONFIG_FILE": "/tmp/dev.tfrc"}, None),
]


@pytest.mark.parametrize(("argv", "env", "form"), TF_ENVIRONMENTS)
def test_terraform_arguments_from_the_environment(argv: list[str], env: dict[str, str], form: ReadForm) -> None:
    assert read_only_form(argv, env) is form


REDIRECTING_ENVIRONMENTS = [
    (["kubectl", "get", "pods"], {"KUBECONFIG": "/tmp/mine.yaml"}),
    (["kubectl", "diff", "-f", "x.yaml"], {"KUBECTL_EXTERNAL_DIFF": "sh -c 'curl …'"}),
    (["kubectl", "get", "pods"], {"LD_PRELOAD": "/tmp/x.so"}),
    (["helm", "list"], {"HELM_KUBEAPISERVER": "https://elsewhere"}),
    (["helm", "list"], {"HELM_PLUGINS": "/tmp/plugins"}),
    (["aws", "sts", "get-caller-identity"], {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}),
    (["aws", "ec2", "describe-instances"], {"AWS_DATA_PATH": "/tmp/models"}),
    (["aws", "ec2", "describe-instances"], {"AWS_CONFIG_FILE": "/tmp/config"}),
    (["aws", "ec2", "describe-instances"], {"PYTHONPATH": "/tmp/site"}),
    (["gcloud", "compute", "instances", "list"], {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE": "http://x/"}),
    (["gcloud", "compute", "instances", "list"], {"CLOUDSDK_PYTHON": "/tmp/python"}),
    (["az", "vm", "list"], {"AZURE_CONFIG_DIR": "/tmp/az"}),
    (["pulumi", "version"], {"PULUMI_HOME": "/tmp/pulumi"}),
]


@pytest.mark.parametrize(("argv", "env"), REDIRECTING_ENVIRONMENTS)
def test_a_variable_the_run_set_that_redirects_it(
    argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in env:
        monkeypatch.delenv(name, raising=False)
    assert read_only_form(argv, env) is None


def test_a_variable_inherited_from_the_agent_is_no_redirection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corporate.pem")
    assert is_read_only(["kubectl", "get", "pods"], dict(os.environ)) is True
    assert is_read_only(["kubectl", "get", "pods"], {**os.environ, "SSL_CERT_FILE": "/tmp/mine.pem"}) is False


def test_the_ordinary_variables_of_a_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    env = {"AWS_PROFILE": "prod", "AWS_REGION": "eu-west-1", "HOME": "/nonexistent"}
    assert is_read_only(["aws", "ec2", "describe-instances"], env) is True


def _alias_file(home: Path, text: str) -> None:
    (home / ".aws" / "cli").mkdir(parents=True)
    (home / ".aws" / "cli" / "alias").write_text(text)


def test_an_aws_alias_is_not_read_only(tmp_path: Path) -> None:
    _alias_file(tmp_path, "[toplevel]\ndescribe-all = ec2 terminate-instances --instance-ids i-1\n")
    assert is_read_only(["aws", "describe-all"], {}, home=str(tmp_path)) is False
    assert is_read_only(["aws", "ec2", "describe-instances"], {}, home=str(tmp_path)) is True


def test_an_aws_alias_under_the_runs_own_home(tmp_path: Path) -> None:
    _alias_file(tmp_path, "[toplevel]\nec2 = !f() { aws ec2 terminate-instances --instance-ids i-1; }; f\n")
    assert is_read_only(["aws", "ec2", "describe-instances"], {"HOME": str(tmp_path)}, home="/nonexistent") is False


def test_an_aws_alias_of_a_service_command(tmp_path: Path) -> None:
    _alias_file(tmp_path, "[command ec2]\ndescribe-mine = terminate-instances --instance-ids i-1\n")
    assert is_read_only(["aws", "ec2", "describe-mine"], {}, home=str(tmp_path)) is False


def test_an_alias_file_that_cannot_be_read(tmp_path: Path) -> None:
    _alias_file(tmp_path, "not an ini file [\n")
    assert is_read_only(["aws", "ec2", "describe-instances"], {}, home=str(tmp_path)) is False


def test_an_aws_alias_under_this_process_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _alias_file(tmp_path, "[toplevel]\ndescribe-all = ec2 terminate-instances --instance-ids i-1\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert is_read_only(["aws", "describe-all"], {}) is False
