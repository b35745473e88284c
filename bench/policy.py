"""What does the one permission policy cost per call?

1. Deciding a call against 200 rules (user and project, deny, ask and allow; every form): the rules' match
   (the bash line parsed and unwrapped, the path made workspace-relative, the plan's resources walked) and
   the policy's verdict. Goal: ≤ 0.2 ms (median) for each kind of call.

    .venv/bin/python bench/policy.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from iac_code.agent.policy import JudgedCall, decide
from iac_code.agent.rules import Rules, parse_permissions
from iac_code.tools.base import AccessDetails

WORKSPACE = Path("/srv/repo")
PROGRAMS = ["kubectl", "terraform", "helm", "aws", "gcloud", "git", "docker", "make", "npm", "tofu"]


def two_hundred_rules() -> Rules:
    """200 rules of every form, spread over deny, ask and allow and two files, none of which fits the calls
    below before the last few (the worst case: every rule is tried)."""
    deny = [f"Bash({PROGRAMS[n % 10]} delete{n} *)" for n in range(40)]
    deny += [f"Read(secrets{n}/**)" for n in range(15)] + [f"Plan(delete aws_db_instance.db{n}*)" for n in range(15)]
    ask = [f"Bash({PROGRAMS[n % 10]} scale{n} *)" for n in range(30)] + [f"Mcp(server{n})" for n in range(20)]
    ask += [f"WebFetch(*.host{n}.example)" for n in range(10)]
    allow = [f"Bash({PROGRAMS[n % 10]} get{n})" for n in range(40)] + [f"Write(modules/m{n}/**)" for n in range(20)]
    allow += ["Bash(terraform plan)", "Bash(kubectl get *)", "Write(modules/**)", "iac_check", "Mcp(github)"]
    allow += [f"tool_{n}" for n in range(200 - len(deny) - len(ask) - len(allow))]
    user = parse_permissions({"deny": deny[:35], "ask": ask[:30], "allow": allow[:50]}, Path("/home/u/config.json"))
    project = parse_permissions({"deny": deny[35:], "ask": ask[30:], "allow": allow[50:]}, WORKSPACE / "settings")
    rules = Rules(
        WORKSPACE,
        deny=tuple(user["deny"] + project["deny"]),
        ask=tuple(user["ask"] + project["ask"]),
        allow=tuple(user["allow"] + project["allow"]),
        trusted=True,
    )
    assert len(rules.deny) + len(rules.ask) + len(rules.allow) == 200
    return rules


def calls() -> dict[str, JudgedCall]:
    resources = [{"address": f"aws_instance.web{n}", "action": "update", "actions": ["update"]} for n in range(20)]
    return {
        "bash, 3 commands": JudgedCall(
            "bash", "execute", {"command": "env TF_LOG=1 terraform plan && sudo kubectl get pods -A | grep web"}
        ),
        "write_file": JudgedCall("write_file", "write", {"path": "modules/vpc/main.tf", "content": "x"}),
        "MCP tool": JudgedCall("mcp__github__list_issues", "external", {}),
        "bound apply, 20 resources": JudgedCall(
            "bash", "infra_change", {"command": "terraform apply"}, AccessDetails("", {"resources": resources})
        ),
    }


def decide_against_200_rules(runs: int) -> dict[str, float]:
    """The median time, in ms, to decide each kind of call against 200 rules."""
    rules = two_hundred_rules()
    medians = {}
    for name, call in calls().items():
        timings = []
        for _ in range(runs):
            fresh = JudgedCall(call.subject, call.access, dict(call.arguments), call.details)  # nothing cached
            start = time.perf_counter()
            decide(fresh.access, "default", None, rules.match(fresh))
            timings.append(time.perf_counter() - start)
        medians[name] = statistics.median(timings) * 1000
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    print("deciding a call against 200 rules (median; goal <= 0.2 ms):")
    for name, median in decide_against_200_rules(args.runs).items():
        print(f"  {name:<28} {median:.3f} ms")


if __name__ == "__main__":
    main()
