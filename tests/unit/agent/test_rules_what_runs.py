"""Rules match what runs (issue 37): a deny or ask Bash rule fits the command read past its CLI's global options
and `apply -destroy` read as destroy, while an allow rule fits only the command as written; a Plan rule fits a
resource by its previous address (a `moved` block) and its address without instance keys (a `count`), and
`**.` reaches into modules; Read and Write rules judge the path the loop resolved once, the one the tool opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.agent.policy import JudgedCall
from iac_code.agent.rule_patterns import opened_path
from iac_code.agent.rules import Rules, parse_permissions
from iac_code.tools.base import AccessDetails


def rules_of(entries: dict[str, list[str]], workspace: Path = Path("/ws")) -> Rules:
    parsed = parse_permissions(entries, Path("/home/u/.iac-code/config.json"))
    return Rules(workspace, tuple(parsed["deny"]), tuple(parsed["ask"]), tuple(parsed["allow"]))


def decision(rules: Rules, command: str) -> str | None:
    hit = rules.match(JudgedCall("bash", "execute", {"command": command}))
    return None if hit is None else hit.decision


DENY = rules_of({"deny": ["Bash(terraform destroy *)", "Bash(kubectl delete pod *)", "Bash(helm uninstall *)"]})


@pytest.mark.parametrize(
    "command",
    [
        "terraform -chdir=. destroy",
        "terraform -chdir=x destroy -auto-approve",
        "terraform apply -destroy",
        "terraform apply -auto-approve --destroy",
        "terraform apply -destroy=true -auto-approve",
        "terraform apply -destroy=$X",  # computed at run time: it may be true
        "sudo terraform -chdir=envs/prod apply -destroy",
        "bash -c 'terraform -chdir=. apply -destroy'",
        "kubectl --context prod delete pod a",
        "kubectl --kubeconfig f -n app delete pod a",
        "kubectl --namespace=app --context=x delete pod a",
        "kubectl delete -n prod pod a",  # pflag: a global option after the verb
        "kubectl --unknown-flag delete pod a",  # an option no table knows: read both ways
        "helm --kube-context prod -n app uninstall web",
        "kubectl -v 9 delete pod a",
        "TF_CLI_ARGS_apply=-destroy terraform apply -auto-approve",  # terraform takes arguments from them
        "export TF_CLI_ARGS='-destroy'; terraform apply",
        "env TF_CLI_ARGS_apply=-destroy terraform -chdir=x apply",
    ],
)
def test_a_deny_rule_fits_the_command_past_its_global_options(command: str) -> None:
    assert decision(DENY, command) == "deny", command


@pytest.mark.parametrize(
    "command",
    [
        "terraform apply -destroy=false",
        "terraform plan -destroy",  # plans only: a Plan rule judges the destroy it would apply
        "terraform -chdir=. plan",
        "kubectl --context prod get pod a",
        "kubectl delete -n prod deployment a",
        "echo terraform -chdir=. destroy",
        "TF_CLI_ARGS_plan=-destroy terraform apply",
    ],
)
def test_a_deny_rule_does_not_reach_other_commands(command: str) -> None:
    assert decision(DENY, command) is None, command


def test_an_allow_rule_fits_only_the_command_as_written() -> None:
    rules = rules_of({"allow": ["Bash(kubectl get *)", "Bash(terraform plan *)"]})
    assert decision(rules, "kubectl get pods") == "allow"
    assert decision(rules, "terraform plan -out p") == "allow"
    # a global option changes what runs: another kubeconfig (with its credential plugin), another directory
    assert decision(rules, "kubectl --kubeconfig /tmp/k get pods") is None
    assert decision(rules, "terraform -chdir=../other plan") is None


def test_a_rule_naming_apply_still_fits_apply_destroy_past_global_options() -> None:
    rules = rules_of({"deny": ["Bash(terraform apply *)"]})
    assert decision(rules, "terraform -chdir=envs/prod apply -destroy -auto-approve") == "deny"


def test_an_ask_rule_fits_past_global_options_too() -> None:
    rules = rules_of({"ask": ["Bash(terraform destroy)"]})
    assert decision(rules, "terraform -chdir=envs/prod apply -destroy -auto-approve") == "ask"


def plan_decision(entry: str, *resources: dict[str, object]) -> str | None:
    details = AccessDetails("plan", {"resources": list(resources)})
    hit = rules_of({"deny": [entry]}).match(JudgedCall("bash", "infra_change", {"command": "terraform apply"}, details))
    return None if hit is None else hit.entry


def deleted(address: str, previous: str | None = None) -> dict[str, object]:
    return {"address": address, "action": "delete", "actions": ["delete"], "previousAddress": previous}


def test_a_plan_rule_fits_a_resource_by_its_previous_address() -> None:
    rule = "Plan(delete terraform_data.db)"
    assert plan_decision(rule, deleted("terraform_data.renamed", previous="terraform_data.db")) == rule
    assert plan_decision(rule, deleted("terraform_data.renamed")) is None


def test_a_plan_rule_fits_a_resource_by_its_address_without_instance_keys() -> None:
    rule = "Plan(delete terraform_data.db)"
    assert plan_decision(rule, deleted("terraform_data.db[0]")) == rule
    assert plan_decision(rule, deleted('terraform_data.db["a.b]"]')) == rule
    assert plan_decision(rule, deleted("terraform_data.dbx[0]")) is None


def test_double_star_dot_reaches_the_root_and_every_module() -> None:
    rule = "Plan(delete **.terraform_data.db*)"
    assert plan_decision(rule, deleted("terraform_data.db")) == rule
    assert plan_decision(rule, deleted("module.m.terraform_data.dbx")) == rule
    assert plan_decision(rule, deleted('module.a["k"].module.b[0].terraform_data.db[1]')) == rule
    assert plan_decision(rule, deleted("module.m.terraform_data.web")) is None
    # without `**.`, a rule names the root module's resources only
    assert plan_decision("Plan(delete terraform_data.db*)", deleted("module.m.terraform_data.dbx")) is None


def test_a_read_rule_judges_the_path_resolved_once_not_the_argument_again(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("k")
    (tmp_path / "public.txt").write_text("p")
    link = tmp_path / "link"
    link.symlink_to("public.txt")
    rules = rules_of({"deny": ["Read(secrets/**)"]}, tmp_path)
    opened = opened_path("read_file", {"path": "link"}, tmp_path)
    assert opened == tmp_path / "public.txt"
    link.unlink()
    link.symlink_to("secrets/key.txt")  # flipped after the resolution: the tool opens `opened`, not the link
    assert rules.match(JudgedCall("read_file", "read", {"path": "link"}, opened=opened)) is None
    hit = rules.match(
        JudgedCall("read_file", "read", {"path": "link"}, opened=opened_path("read_file", {"path": "link"}, tmp_path))
    )
    assert hit is not None and hit.decision == "deny"
    assert opened_path("bash", {"path": "link"}, tmp_path) is None
