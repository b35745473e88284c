"""What do the permission rules and the audit trail cost per call? (issue 21)

1. Deciding a call against 200 rules (user and project, deny, ask and allow; every form): the rules' match
   (the bash line parsed and unwrapped, the path made workspace-relative, the plan's resources walked) and
   the policy's verdict. Goal: ≤ 0.2 ms (median) for each kind of call.
2. The audit trail's cost on a prompt round trip (goal ≤ 1 ms, SQLite): a round trip in process (the model
   asks for one call, the policy runs it, the model answers) with and without the trail, the trail in a
   SQLite database on the disk of `--dir`, durable (synchronous=FULL, as served) and with
   synchronous=NORMAL; and one record's write alone (median, p95).

    .venv/bin/python bench/policy.py [--runs 2000] [--rounds 300] [--dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from iac_code.agent.audit import Recorder, TrailRecorder
from iac_code.agent.events import TurnEnd
from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.agent.policy import JudgedCall, Run, Verdict, decide
from iac_code.agent.rules import Rules, parse_permissions
from iac_code.messages import ToolCall
from iac_code.providers.base import Finish, TextDelta, ToolCallReady, Usage
from iac_code.sessions.audit import AuditRecord
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.tools.base import AccessDetails, ToolContext, ToolResult

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


class OneCallModel:
    """Asks for one `look` call, then answers: one prompt round trip with one permission decision."""

    name = "bench"
    model = "bench"
    context_window = 100_000

    async def stream(
        self, system: Any, history: list[Any], tools: Any, *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[Any]:
        if history[-1].role == "user":
            yield ToolCallReady(ToolCall("c1", "look", {"command": "terraform plan -var password=x", "n": 1}))
            yield Usage(10, 5)
            yield Finish("tool_use")
        else:
            yield TextDelta("done")
            yield Finish("end_turn")


class Look:
    name = "look"
    description = "looks"
    parameters: dict[str, Any] = {"type": "object"}
    category = "execute"
    kind = "execute"

    def title(self, args: dict[str, Any]) -> str:
        return "look"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    def access(self, args: dict[str, Any]) -> str:
        return "execute"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("seen")


def judge(call: JudgedCall) -> Verdict:
    return Run(source="mode:bypass-permissions")


async def round_trips(recorder: Recorder | None, rounds: int, workspace: Path) -> list[float]:
    times = []
    for _ in range(rounds):
        loop = AgentLoop(
            LoopConfig(system_prompt="bench"),
            OneCallModel(),  # type: ignore[arg-type]
            {"look": Look()},  # type: ignore[dict-item]
            workspace,
            judge=judge,
            recorder=recorder,
        )
        start = time.perf_counter()
        events = [event async for event in loop.run("go")]
        times.append(time.perf_counter() - start)
        assert isinstance(events[-1], TurnEnd) and events[-1].stop_reason == "end_turn", events[-1]
    return times


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


async def audit_figures(rounds: int, directory: Path, *, durable: bool) -> None:
    store = open_sqlite_store(directory / f"iac-code-{durable}.db", durable=durable)
    trail = store.audit_trail()
    recorder = TrailRecorder(trail, "bench", lambda: "local")
    try:
        await trail.read()  # the database is opened and its schema made before anything is timed
        await round_trips(recorder, 20, directory)  # warm-up
        without, with_trail = [], []
        for _ in range(3):  # interleaved, so a busy moment of the machine weighs on both
            without += await round_trips(None, rounds // 3, directory)
            with_trail += await round_trips(recorder, rounds // 3, directory)
        record = AuditRecord(
            "decision", "local", "bench", "look", "0" * 64, '{"command":"ls"}', "allowed", "mode:default"
        )
        writes = []
        for _ in range(rounds):
            start = time.perf_counter()
            await trail.append(record)
            writes.append(time.perf_counter() - start)
    finally:
        await store.close()
    base, audited = statistics.median(without), statistics.median(with_trail)
    sync = (
        "durable (synchronous=FULL, as served)" if durable else "synchronous=NORMAL (safe from kill -9, not power loss)"
    )
    print(f"audit, SQLite {sync} in {directory}, {len(without)} round trips each:")
    print(f"  prompt round trip without the trail   median {ms(base)}")
    print(f"  prompt round trip with the trail      median {ms(audited)}")
    print(f"  the audit write's cost on a round trip       {ms(audited - base)}   (goal ≤ 1 ms)")
    p95 = statistics.quantiles(writes, n=20)[-1]
    print(f"  one record written alone              median {ms(statistics.median(writes))}, p95 {ms(p95)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000, help="decisions timed per kind of call")
    parser.add_argument("--rounds", type=int, default=300, help="prompt round trips timed with and without the trail")
    parser.add_argument("--dir", type=Path, default=None, help="where the database goes (default: a temporary folder)")
    args = parser.parse_args()
    print("deciding a call against 200 rules (median; goal <= 0.2 ms):")
    for name, median in decide_against_200_rules(args.runs).items():
        print(f"  {name:<28} {median:.3f} ms")
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        for durable in (True, False):
            asyncio.run(audit_figures(args.rounds, Path(directory), durable=durable))


if __name__ == "__main__":
    main()
