"""The bash rule's newer forms through the real headless process (`iac-code -p --yes`): in one turn the model
runs each line as a bash call; stand-in CLIs on PATH record their argv. Each changing line is refused before
it starts (`--yes` does not cover infrastructure changes); each harmless one runs."""

from __future__ import annotations

import os

from tests.e2e.headless_turn import bash_results

STAND_INS = ("kubectl", "helm", "aws", "gcloud", "az", "aliyun", "microk8s", "cdk", "cdktf", "terraform")

CHANGING = [
    "kubectl -n get delete namespace prod",
    "helm -n list uninstall web",
    "kubectl apply --dry-run=client --dry-run=none -f x.yaml",
    "kubectl run x --image=y -- --dry-run=client",
    "aws ec2 terminate-instances --instance-ids i-1",
    "aws s3 rm --recursive s3://bucket",
    "gcloud compute instances delete vm",
    "az group delete -n rg --yes",
    "aliyun ecs DeleteInstance --InstanceId i",
    "microk8s kubectl delete ns prod",
    "cdktf deploy",
    "script -qc 'terraform apply' /dev/null",
    "echo $[1<<2]\nterraform apply",
    'set -- terraform apply; "$@"',
]
HARMLESS = [
    "kubectl apply --dry-run=server -f x.yaml",
    "aws s3 cp s3://bucket/key .",
    "gcloud compute instances list",
    "az group list",
    "terraform plan",
]


def test_each_changing_form_is_refused_and_each_harmless_one_runs(workspace):
    bin_dir = workspace.parent / "bin"
    bin_dir.mkdir()
    log = workspace.parent / "ran.log"
    for name in STAND_INS:
        stand_in = bin_dir / name
        stand_in.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n')
        stand_in.chmod(0o755)
    path = f"{bin_dir}:{os.environ['PATH']}"
    results = bash_results(workspace, CHANGING + HARMLESS, ["--yes"], workspace.parent / "config", path)
    refused = [
        line for line, content in zip(CHANGING + HARMLESS, results, strict=True) if content == "Permission denied."
    ]
    assert refused == CHANGING
    ran = log.read_text().splitlines() if log.exists() else []
    assert ran == [
        "kubectl apply --dry-run=server -f x.yaml",
        "aws s3 cp s3://bucket/key .",
        "gcloud compute instances list",
        "az group list",
        "terraform plan",
    ]
