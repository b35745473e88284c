"""What do permission rules and the audit trail cost?

Audit (issue 21, goal ≤ 1 ms on a prompt round trip, SQLite): a prompt round trip in process (the model
asks for one call, the policy runs it, the model answers) with and without the audit trail, the trail in
a durable SQLite database (synchronous=FULL, as served) on the disk of `--dir`; and one record's write
alone (median, p95).

    .venv/bin/python bench/policy.py [--rounds 300] [--dir DIR]
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
from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import Run, Verdict
from iac_code.messages import ToolCall
from iac_code.providers.base import Finish, TextDelta, ToolCallReady, Usage
from iac_code.sessions.audit import AuditRecord
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.tools.base import ToolContext, ToolResult


class OneCallModel:
    """Asks for one `look` call, then answers: one prompt round trip with one permission decision."""

    name = "bench"
    model = "bench"
    context_window = 100_000

    async def stream(self, system: Any, history: list[Any], tools: Any, *, max_tokens: int) -> AsyncIterator[Any]:
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


def judge(tool_name: str, access: Any) -> Verdict:
    return Run(source="mode:bypass-permissions")


async def round_trips(recorder: Recorder | None, rounds: int, workspace: Path) -> list[float]:
    times = []
    for _ in range(rounds):
        loop = AgentLoop(
            OneCallModel(),  # type: ignore[arg-type]
            {"look": Look()},  # type: ignore[dict-item]
            workspace,
            judge=judge,
            system_prompt="bench",
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
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=None, help="where the database goes (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        for durable in (True, False):
            asyncio.run(audit_figures(args.rounds, Path(directory), durable=durable))


if __name__ == "__main__":
    main()
