"""Rules match what runs, on real terraform (terraform_data only) through `iac-code -p --allow-infra-changes`:
`Bash(terraform destroy *)` refuses a destroy written past `-chdir=` or as `apply -destroy`; a Plan rule naming
a resource still refuses the apply when a `moved` block plans its destroy under a new address, when a `count`
change destroys one of its instances, and (with `**.`) at the root and inside a module. Each refused command
leaves the state as it was."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.e2e.acp.test_rules import bash, project_rules
from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI
from tests.terraform_binary import applied_then_edited

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform

MOVED_AND_REPLACED = """resource "terraform_data" "renamed" {
  triggers_replace = "x"
}
moved {
  from = terraform_data.db
  to   = terraform_data.renamed
}
"""


def serial(directory: Path) -> int:
    return int(json.loads((directory / "terraform.tfstate").read_text())["serial"])


def refused_apply(workspace: Path, directory: Path, rule: str, command: str = "apply -auto-approve") -> None:
    """`terraform -chdir=<directory> <command>` under the deny `rule`: refused, naming the rule, the state
    unchanged."""
    file = project_rules(workspace, {"deny": [rule]})
    before = serial(directory)
    apply = bash(f"terraform -chdir={directory.name} {command}")
    with ScriptedOpenAI([apply, {"text": "refused"}]) as model:
        result = run(workspace, model, "-p", "apply it", "--yes", "--allow-infra-changes")
    assert result.returncode == 0, result.stderr
    (told,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert told == f'Denied by rule "{rule}" in {file}'
    assert serial(directory) == before


@pytest.mark.parametrize("command", ["destroy -auto-approve", "apply -destroy -auto-approve"])
def test_a_destroy_rule_sees_past_chdir_and_reads_apply_destroy_as_destroy(workspace: Path, command: str) -> None:
    net = applied_then_edited(
        workspace / "net", 'resource "terraform_data" "db" {}\n', 'resource "terraform_data" "db" {}\n'
    )
    refused_apply(workspace, net, "Bash(terraform destroy *)", command)


def test_a_moved_block_does_not_take_a_resource_out_of_its_rule(workspace: Path) -> None:
    net = applied_then_edited(workspace / "net", 'resource "terraform_data" "db" {}\n', MOVED_AND_REPLACED)
    refused_apply(workspace, net, "Plan(delete terraform_data.db)")


def test_a_count_change_does_not_take_an_instance_out_of_its_rule(workspace: Path) -> None:
    applied = 'resource "terraform_data" "db" {\n  count = 2\n}\n'
    net = applied_then_edited(workspace / "net", applied, applied.replace("2", "1"))
    refused_apply(workspace, net, "Plan(delete terraform_data.db)")


def test_double_star_dot_reaches_a_resource_in_a_module(workspace: Path) -> None:
    net = workspace / "net"
    (net / "m").mkdir(parents=True)
    (net / "m" / "main.tf").write_text('resource "terraform_data" "dbx" {}\n')
    (net / "main.tf").write_text('module "m" {\n  source = "./m"\n}\n')
    for command in (["terraform", "init", "-input=false"], ["terraform", "apply", "-auto-approve", "-input=false"]):
        subprocess.run(command, cwd=net, check=True, capture_output=True)
    (net / "main.tf").write_text("")  # the module call removed: module.m.terraform_data.dbx is destroyed
    refused_apply(workspace, net, "Plan(delete **.terraform_data.db*)")


def test_double_star_dot_reaches_the_root_module_too(workspace: Path) -> None:
    net = applied_then_edited(workspace / "net", 'resource "terraform_data" "db" {}\n', "")
    refused_apply(workspace, net, "Plan(delete **.terraform_data.db*)")
