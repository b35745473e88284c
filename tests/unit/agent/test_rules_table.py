"""The rules' table: (rule set, call, mode) → decision, and what decided it. Evasion forms the infrastructure
rule knows (wrappers, `env X=1`, `bash -c`, full paths, `a && b`, here-documents, computed programs, an
unreadable line) are seen through, for deny rules (any command fits) and allow rules (every command must)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iac_code.agent.policy import ONCE_OPTIONS, Ask, JudgedCall, Mode, Refuse, Remembered, Run, decide
from iac_code.agent.rules import Rules, parse_permissions
from iac_code.tools.base import Access, AccessDetails

WORKSPACE = Path("/ws")
USER_FILE = Path("/home/u/.iac-code/config.json")

DENY_DELETE = {"deny": ["Bash(kubectl delete *)"]}
ALLOW_PLAN = {"allow": ["Bash(terraform plan)", "Bash(kubectl get *)"]}


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command}


def path(tool: str, value: str | None) -> tuple[str, dict[str, Any]]:
    return tool, ({} if value is None else {"path": value})


def fetch(url: str) -> tuple[str, dict[str, Any]]:
    return "web_fetch", {"url": url}


def plan(*resources: tuple[str, str]) -> AccessDetails:
    listed = []
    for address, action in resources:
        actions = ["delete", "create"] if action == "replace" else [action]
        listed.append({"address": address, "action": action, "actions": actions})
    return AccessDetails("plan", {"resources": listed})


# (rules, (subject, arguments), access, mode, expected) — expected: "<run|ask|refuse> <rule|mode>"
CASES: list[tuple[dict[str, list[str]], tuple[str, dict[str, Any]], Access, Mode, str]] = [
    # deny a command, in bypass mode, however it is written
    (DENY_DELETE, bash("kubectl delete pod a"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("kubectl get pods"), "execute", "bypass-permissions", "run mode"),
    (DENY_DELETE, bash("env X=1 kubectl delete pod a"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("bash -c 'kubectl delete ns x'"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("sh -lc 'true; kubectl delete ns x'"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("/usr/local/bin/kubectl delete x"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("kubectl get po && kubectl delete x"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("sudo -u root kubectl delete x"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("timeout 10 kubectl delete x"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("eval 'kubectl delete x'"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("bash <<EOF\nkubectl delete x\nEOF"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("kubectl delete"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("echo kubectl delete x"), "execute", "bypass-permissions", "run mode"),
    (DENY_DELETE, bash("$(echo kubectl) delete pod"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("X=1 $K delete pod"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash('echo "open kubectl delete x'), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("kubectl1.28 delete x"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("ls; (kubectl delete x)"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("kubectl get x -o name | xargs kubectl delete"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("for p in a b; do kubectl delete $p; done"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("echo $(kubectl delete x)"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("bash -o pipefail -c 'kubectl delete x'"), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash('bash -c "$SCRIPT"'), "execute", "bypass-permissions", "refuse rule"),
    (DENY_DELETE, bash("bash deploy.sh"), "execute", "bypass-permissions", "run mode"),
    (DENY_DELETE, bash("kubectl delete x"), "infra_change", "default", "refuse rule"),
    (DENY_DELETE, bash("kubectl delete x"), "execute", "read-only", "refuse rule"),
    # allow: every command of the line needs an allow rule
    (ALLOW_PLAN, bash("terraform plan -out x"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("terraform plan && kubectl get pods"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("terraform plan && rm -rf /"), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash("terraform plan; $(rm -rf x)"), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash("terraform planx"), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash("terraform validate"), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash("env TF_LOG=1 terraform plan"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("bash -c 'terraform plan'"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("$TF plan"), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash('bash -c "$SCRIPT"'), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash('terraform plan "'), "execute", "default", "ask mode"),
    (ALLOW_PLAN, bash("/opt/bin/terraform plan"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("kubectl get"), "execute", "default", "run rule"),
    (ALLOW_PLAN, bash("kubectl delete x"), "infra_change", "default", "ask mode"),
    (ALLOW_PLAN, bash(""), "execute", "default", "ask mode"),
    ({"allow": ["Bash(terraform *)"]}, bash("terraform apply"), "infra_change", "default", "ask mode"),
    ({"allow": ["Bash(terraform *)"]}, bash("terraform apply"), "infra_plan", "default", "run mode"),
    ({"allow": ["Bash(*)"]}, bash("rm -rf build"), "execute", "default", "run rule"),
    ({"allow": ["Bash(*)"]}, bash("kubectl delete x"), "infra_change", "bypass-permissions", "ask mode"),
    ({"allow": ["Bash"]}, bash("make all"), "execute", "default", "run rule"),
    ({"allow": ["Bash(git *)"]}, bash("git status; git log"), "execute", "default", "run rule"),
    ({"allow": ["Bash(git sta*)"]}, bash("git status"), "execute", "default", "run rule"),
    ({"allow": ["Bash(git sta*)"]}, bash("git stash drop"), "execute", "default", "run rule"),
    ({"allow": ["Bash(git sta?)"]}, bash("git status"), "execute", "default", "ask mode"),
    ({"allow": ["Bash(ls)"]}, bash("ls"), "execute", "read-only", "refuse mode"),
    ({"allow": ["Bash(ls)"]}, bash("ls"), "execute", "plan", "run rule"),
    # ask beats allow, deny beats both, whatever the mode
    ({"ask": ["Bash(terraform *)"]}, bash("terraform plan"), "execute", "bypass-permissions", "ask rule"),
    ({"ask": ["Bash(terraform *)"], "allow": ["Bash(*)"]}, bash("terraform fmt"), "execute", "default", "ask rule"),
    ({"deny": ["Bash(rm *)"], "allow": ["Bash(*)"]}, bash("rm x"), "execute", "default", "refuse rule"),
    ({"deny": ["Bash(rm *)"], "ask": ["Bash(rm *)"]}, bash("rm x"), "execute", "default", "refuse rule"),
    ({"ask": ["Bash(rm *)"]}, bash("rm x"), "execute", "read-only", "refuse mode"),
    ({"ask": ["Bash(kubectl *)"]}, bash("kubectl delete x"), "infra_change", "bypass-permissions", "ask rule"),
    ({"ask": ["Bash(terraform *)"]}, bash("terraform apply"), "infra_plan", "bypass-permissions", "run mode"),
    # Read and Write: the path argument, relative to the workspace
    ({"deny": ["Read(.env)"]}, path("read_file", ".env"), "read", "bypass-permissions", "refuse rule"),
    ({"deny": ["Read(.env)"]}, path("read_file", "./.env"), "read", "default", "refuse rule"),
    ({"deny": ["Read(.env)"]}, path("read_file", "sub/.env"), "read", "default", "run mode"),
    ({"deny": ["Read(.env)"]}, path("read_file", "/ws/.env"), "read", "default", "refuse rule"),
    ({"deny": ["Read(.env)"]}, path("read_file", "sub/../.env"), "read", "default", "refuse rule"),
    ({"deny": ["Read(**/.env)"]}, path("read_file", "sub/.env"), "read", "default", "refuse rule"),
    ({"deny": ["Read(**/.env)"]}, path("read_file", ".env"), "read", "default", "refuse rule"),
    ({"deny": ["Read(secrets/)"]}, path("grep", "secrets/a"), "read", "default", "refuse rule"),
    ({"deny": ["Read(secrets/)"]}, path("list_files", "secrets"), "read", "default", "refuse rule"),
    ({"deny": ["Read(secrets/**)"]}, path("glob", "secretsx"), "read", "default", "run mode"),
    ({"deny": ["Read(secrets/**)"]}, path("read_file", "docs/x"), "read", "default", "run mode"),
    ({"deny": ["Read(/etc/**)"]}, path("read_file", "/etc/passwd"), "read", "default", "refuse rule"),
    ({"deny": ["Read(.)"]}, path("grep", None), "read", "default", "refuse rule"),
    ({"deny": ["Read(*.pem)"]}, path("read_file", "a/key.pem"), "read", "default", "run mode"),
    ({"deny": ["Read(*.[pc]em)"]}, path("read_file", "key.cem"), "read", "default", "refuse rule"),
    ({"deny": ["Read(main.tf)"]}, path("write_file", "main.tf"), "write", "accept-edits", "run mode"),
    ({"deny": ["Read"]}, path("grep", "x"), "read", "bypass-permissions", "refuse rule"),
    ({"allow": ["Write(modules/**)"]}, path("write_file", "modules/vpc/main.tf"), "write", "default", "run rule"),
    ({"allow": ["Write(modules/**)"]}, path("edit_file", "main.tf"), "write", "default", "ask mode"),
    ({"allow": ["Write(modules/*.tf)"]}, path("write_file", "modules/a/b.tf"), "write", "default", "ask mode"),
    ({"allow": ["Write(modules/*.tf)"]}, path("edit_file", "modules/b.tf"), "write", "default", "run rule"),
    ({"allow": ["Write(modules/**)"]}, path("write_file", "modules/../main.tf"), "write", "default", "ask mode"),
    ({"allow": ["Write(modules/**)"]}, path("write_file", "modules/x"), "write", "plan", "refuse mode"),
    ({"deny": ["Write(*.tfstate)"]}, path("write_file", "terraform.tfstate"), "write", "accept-edits", "refuse rule"),
    (
        {"deny": ["Write(**/*.tfstate)"]},
        path("edit_file", "env/prod/terraform.tfstate"),
        "write",
        "default",
        "refuse rule",
    ),
    # WebFetch: the host
    ({"deny": ["WebFetch(example.com)"]}, fetch("https://example.com/x"), "read", "default", "refuse rule"),
    ({"deny": ["WebFetch(example.com)"]}, fetch("https://api.example.com/x"), "read", "default", "run mode"),
    ({"deny": ["WebFetch(*.example.com)"]}, fetch("https://api.example.com/x"), "read", "default", "refuse rule"),
    ({"deny": ["WebFetch(EXAMPLE.com)"]}, fetch("https://Example.COM:8443/x"), "read", "default", "refuse rule"),
    # MCP tools, by server or server__tool
    ({"allow": ["Mcp(github)"]}, ("mcp__github__list_issues", {}), "external", "default", "run rule"),
    ({"allow": ["Mcp(github)"]}, ("mcp__gitlab__list_issues", {}), "external", "default", "ask mode"),
    ({"allow": ["Mcp(github)"]}, ("mcp__github2__list_issues", {}), "external", "default", "ask mode"),
    ({"allow": ["Mcp(github__list_*)"]}, ("mcp__github__list_prs", {}), "external", "bypass-permissions", "run rule"),
    ({"allow": ["Mcp(github__list_*)"]}, ("mcp__github__create_pr", {}), "external", "default", "ask mode"),
    (
        {"deny": ["Mcp(github__delete_repo)"]},
        ("mcp__github__delete_repo", {}),
        "infra_change",
        "default",
        "refuse rule",
    ),
    ({"allow": ["Mcp(aws)"]}, ("mcp__aws__terminate_instances", {}), "infra_change", "default", "ask mode"),
    ({"allow": ["Mcp(my.server)"]}, ("mcp__my_server__look", {}), "external", "default", "run rule"),
    ({"allow": ["Mcp(aws)"]}, ("mcp__aws__describe", {}), "external", "read-only", "refuse mode"),
    # a tool by name
    ({"deny": ["web_fetch"]}, fetch("https://example.com"), "read", "default", "refuse rule"),
    ({"allow": ["agent"]}, ("agent", {"prompt": "look"}), "execute", "default", "run rule"),
    ({"deny": ["iac_check"]}, ("iac_check", {}), "read", "bypass-permissions", "refuse rule"),
    ({"allow": ["iac_check"]}, ("iac_check:tflint", {}), "workspace_code", "default", "ask mode"),
    ({"deny": ["bash"]}, bash("ls"), "execute", "bypass-permissions", "refuse rule"),
]

# Plan rules, on a bound apply's question (access infra_change, the plan in its details)
PLAN_CASES: list[tuple[dict[str, list[str]], AccessDetails | None, Access, str]] = [
    (
        {"deny": ["Plan(delete terraform_data.*)"]},
        plan(("terraform_data.old", "delete")),
        "infra_change",
        "refuse rule",
    ),
    ({"deny": ["Plan(delete terraform_data.*)"]}, plan(("terraform_data.new", "create")), "infra_change", "ask mode"),
    (
        {"deny": ["Plan(delete terraform_data.*)"]},
        plan(("terraform_data.web", "replace")),
        "infra_change",
        "refuse rule",
    ),
    ({"deny": ["Plan(replace *)"]}, plan(("terraform_data.web", "replace")), "infra_change", "refuse rule"),
    ({"deny": ["Plan(replace *)"]}, plan(("terraform_data.web", "update")), "infra_change", "ask mode"),
    ({"deny": ["Plan(* module.db.*)"]}, plan(("module.db.aws_db_instance.x", "update")), "infra_change", "refuse rule"),
    ({"deny": ["Plan(delete aws_db_instance.*)"]}, plan(("aws_s3_bucket.a", "delete")), "infra_change", "ask mode"),
    ({"ask": ["Plan(create aws_db_instance.*)"]}, plan(("aws_db_instance.main", "create")), "infra_change", "ask rule"),
    ({"deny": ["Plan(delete *)"]}, None, "infra_plan", "run mode"),
]


def rules_of(entries: dict[str, list[str]]) -> Rules:
    parsed = parse_permissions(entries, USER_FILE)
    return Rules(WORKSPACE, tuple(parsed["deny"]), tuple(parsed["ask"]), tuple(parsed["allow"]))


def judged(rules: Rules, call: JudgedCall, mode: Mode, remembered: Remembered | None = None) -> str:
    verdict = decide(call.access, mode, remembered, rules.match(call))
    word = {Run: "run", Ask: "ask", Refuse: "refuse"}[type(verdict)]
    by = verdict.source.split(":", 1)[0]
    if by == "rule":
        assert verdict.source.startswith(f"rule:{USER_FILE}:")
    return f"{word} {by}"


@pytest.mark.parametrize(("entries", "call", "access", "mode", "expected"), CASES)
def test_a_call_against_a_rule_set(
    entries: dict[str, list[str]], call: tuple[str, dict[str, Any]], access: Access, mode: Mode, expected: str
) -> None:
    subject, arguments = call
    assert judged(rules_of(entries), JudgedCall(subject, access, arguments), mode) == expected


@pytest.mark.parametrize(("entries", "details", "access", "expected"), PLAN_CASES)
def test_a_plan_against_a_rule_set(
    entries: dict[str, list[str]], details: AccessDetails | None, access: Access, expected: str
) -> None:
    call = JudgedCall("bash", access, {"command": "terraform apply"}, details)
    assert judged(rules_of(entries), call, "bypass-permissions") == expected


def test_a_command_a_guards_shim_asks_about_is_judged_instead_of_the_line() -> None:
    rules = rules_of(DENY_DELETE)
    asked = AccessDetails(command="kubectl delete ns prod")
    call = JudgedCall("bash", "infra_change", {"command": "./deploy.sh"}, asked)
    assert judged(rules, call, "bypass-permissions") == "refuse rule"
    assert judged(rules, JudgedCall("bash", "infra_change", {"command": "./deploy.sh"}), "bypass-permissions") == (
        "ask mode"
    )


def test_there_are_at_least_80_cases() -> None:
    assert len(CASES) + len(PLAN_CASES) >= 80


def test_a_denied_call_names_the_rule_and_its_file() -> None:
    call = JudgedCall("bash", "execute", {"command": "kubectl delete ns prod"})
    verdict = decide("execute", "bypass-permissions", None, rules_of(DENY_DELETE).match(call))
    assert verdict == Refuse(f'Denied by rule "Bash(kubectl delete *)" in {USER_FILE}')
    assert verdict.source == f"rule:{USER_FILE}:Bash(kubectl delete *)"


def test_an_ask_rule_asks_every_time_so_it_offers_no_always() -> None:
    call = JudgedCall("bash", "execute", {"command": "terraform plan"})
    rules = rules_of({"ask": ["Bash(terraform plan)"]})
    verdict = decide("execute", "default", "allow", rules.match(call))  # even after an "always allow"
    assert isinstance(verdict, Ask) and verdict.options == ONCE_OPTIONS


def test_a_remembered_reject_outranks_an_allow_rule() -> None:
    call = JudgedCall("bash", "execute", {"command": "ls"})
    assert judged(rules_of({"allow": ["Bash(ls)"]}), call, "default", "reject") == "refuse remembered"


def test_a_line_needing_two_allow_rules_is_allowed_by_the_first_commands() -> None:
    call = JudgedCall("bash", "execute", {"command": "kubectl get pods && terraform plan"})
    hit = rules_of(ALLOW_PLAN).match(call)
    assert hit is not None and (hit.decision, hit.entry) == ("allow", "Bash(kubectl get *)")
