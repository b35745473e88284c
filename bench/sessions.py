"""Figures for the file session store: load, list, append. Prints medians; run `python bench/sessions.py`.

Goals (from the issue): load of a 1,000-message session under 0.2 s, list among 10,000 sessions
under 0.1 s. Append is measured with and without fdatasync to justify the `durable` default.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from tests.e2e.acp.wire import AgentProcess, model_env  # noqa: E402

from iac_code.messages import Message, ToolCall, tool_result, user  # noqa: E402
from iac_code.sessions.disk import write_atomic  # noqa: E402
from iac_code.sessions.files import FileSessionStore  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402

SESSIONS = 10_000
CWDS = 100  # so one cwd holds 100 of the 10,000 sessions


def median_ms(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def realistic_history(count: int, rng: random.Random) -> list[Message]:
    """Prompts, assistant turns with tool calls, and tool results of a few KB (file reads, plans)."""
    history: list[Message] = []
    while len(history) < count:
        history.append(user("Add a NAT gateway to the VPC module and wire the private subnets. " * rng.randint(1, 4)))
        for step in range(rng.randint(1, 4)):
            call = ToolCall(id=f"call_{len(history)}", name="read_file", arguments={"path": f"modules/vpc/{step}.tf"})
            history.append(
                Message(role="assistant", text="Let me look at the module. " * rng.randint(2, 20), tool_calls=[call])
            )
            history.append(
                tool_result(
                    call,
                    'resource "alicloud_vswitch" "private" {\n  cidr_block = "10.0.1.0/24"\n}\n' * rng.randint(10, 80),
                )
            )
        history.append(
            Message(
                role="assistant", text="Done: the NAT gateway now serves both private subnets. " * rng.randint(3, 30)
            )
        )
    return history[:count]


def bench_load(root: Path) -> None:
    store = FileSessionStore(root, durable=False)
    store.create(SessionRecord(session_id="big", cwd="/w"))
    for message in realistic_history(1000, random.Random(1)):
        store.append("big", message)
    size_kb = (root / "big" / "messages.jsonl").stat().st_size / 1024
    warm = median_ms(lambda: store.load("big"), 21)
    cold = median_ms(lambda: FileSessionStore(root).load("big"), 21)
    print(
        f"load, 1,000 messages ({size_kb:,.0f} KB):          {warm:7.2f} ms   (new store instance: {cold:.2f} ms)   goal < 200 ms"
    )


def bench_load_over_the_wire(root: Path) -> None:
    """session/load of a 1,000-message session through the real `iac-code acp`: read, repair check,
    replay of every message as session/update notifications, then the response."""
    workspace = root / "work"
    workspace.mkdir(parents=True)
    store = FileSessionStore(root / "config" / "sessions", durable=False)
    store.create(SessionRecord(session_id="big", cwd=str(workspace)))
    for message in realistic_history(1000, random.Random(1)):
        store.append("big", message)
    agent = AgentProcess(model_env("http://127.0.0.1:9", root / "config"))
    agent.initialize()
    params = {"sessionId": "big", "cwd": str(workspace), "mcpServers": []}
    times, updates = [], 0
    for _ in range(7):
        started = time.perf_counter()
        _, seen = agent.response(agent.start_request("session/load", params))
        times.append(time.perf_counter() - started)
        updates = len(seen)
        agent.call("session/close", {"sessionId": "big"})  # the next load reads the disk again
    agent.close()
    print(
        f"session/load over stdio, 1,000 messages:    {statistics.median(times) * 1000:7.2f} ms   ({updates:,} updates replayed before the response)"
    )


def bench_list(root: Path) -> None:
    store = FileSessionStore(root, durable=False)
    start = time.perf_counter()
    for n in range(SESSIONS):
        store.create(
            SessionRecord(session_id=f"session-{n:05d}", cwd=f"/home/dev/project-{n % CWDS}", title=f"Session {n}")
        )
    created_s = time.perf_counter() - start
    for n in range(0, SESSIONS, 7):
        store.append(f"session-{n:05d}", user("hi"))
    print(f"create 10,000 sessions (no fsync):          {created_s:7.2f} s    (setup)")

    one_cwd = "/home/dev/project-42"
    cold_cwd = median_ms(lambda: FileSessionStore(root).list(one_cwd), 11)
    cold_all = median_ms(lambda: FileSessionStore(root).list(None), 11)
    warm_cwd = median_ms(lambda: store.list(one_cwd), 21)
    warm_all = median_ms(lambda: store.list(None), 21)
    other = FileSessionStore(root, durable=False)

    def list_after_foreign_append() -> None:
        other.append("session-00042", user("from another window"))
        store.list(one_cwd)

    after_append = median_ms(list_after_foreign_append, 21)
    (root / "index.jsonl").unlink()
    rebuild = median_ms(lambda: FileSessionStore(root).list(None), 1)
    print(
        f"list one cwd among 10,000 sessions:         {warm_cwd:7.2f} ms   (new store instance: {cold_cwd:.2f} ms)   goal < 100 ms"
    )
    print(f"list all 10,000 sessions (first page):      {warm_all:7.2f} ms   (new store instance: {cold_all:.2f} ms)")
    print(f"list after another process appended:        {after_append:7.2f} ms   (incremental index read)")
    print(
        f"index rebuild from 10,000 meta.json files:  {rebuild:7.2f} ms   (only when the index is missing or damaged)"
    )


def bench_append(root: Path) -> None:
    message = Message(role="assistant", text="Planning the change. " * 40)  # ~1 KB line
    for durable in (False, True):
        store = FileSessionStore(root / str(durable), durable=durable)
        store.create(SessionRecord(session_id="s", cwd="/w"))
        cost = median_ms(lambda store=store: store.append("s", message), 500)
        label = "with fdatasync (default)" if durable else "without fsync"
        print(f"append one message, {label + ':':27} {cost * 1000:7.0f} µs")
    meta = json.dumps({"session_id": "s", "cwd": "/w", "title": "t", "permissions": {}}).encode()
    rewrite = median_ms(lambda: write_atomic(root / "meta.json", meta, durable=True), 200)
    print(f"for comparison, one durable meta.json rewrite: {rewrite * 1000:4.0f} µs   (why append does not rewrite it)")


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        bench_load(Path(temp) / "load")
        bench_load_over_the_wire(Path(temp) / "wire")
        bench_list(Path(temp) / "list")
        bench_append(Path(temp) / "append")


if __name__ == "__main__":
    main()
