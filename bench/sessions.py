"""The session stores side by side, in the same run: SQLite (the default) and the file store of earlier
versions (files.py, the baseline). Prints medians; run `python bench/sessions.py`.

Goals (issue 22): SQLite's append latency and load of a 1,000-message session no worse than the file
store's; `session/list` of 10,000 sessions ≤ 50 ms. Appends are timed durable, as served (fdatasync per
append for files, synchronous=FULL for SQLite), and without syncs (what a kill -9 alone needs).
"""

from __future__ import annotations

import functools
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

from iac_code.database.sqlite import connect  # noqa: E402
from iac_code.messages import Message, ToolCall, tool_result, user  # noqa: E402
from iac_code.sessions.files import FileSessionStore  # noqa: E402
from iac_code.sessions.import_files import import_file_store  # noqa: E402
from iac_code.sessions.sqlite import SqliteSessions  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402
from iac_code.sessions.threaded import SyncSessionStore  # noqa: E402

SESSIONS = 10_000
CWDS = 100  # so one cwd holds 100 of the 10,000 sessions
Opener = Callable[[Path, bool], SyncSessionStore]


def _sqlite(root: Path, durable: bool) -> SqliteSessions:
    root.mkdir(parents=True, exist_ok=True)
    return SqliteSessions(root / "iac-code.db", durable=durable)


STORES: dict[str, Opener] = {
    "files": lambda root, durable: FileSessionStore(root / "sessions", durable=durable),
    "sqlite": _sqlite,
}


def timings_ms(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def median_ms(action: Callable[[], object], repeat: int) -> float:
    return statistics.median(timings_ms(action, repeat))


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


def interleaved_ms(actions: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Each action timed `repeat` times, taking turns, so a busy machine slows them alike; sorted times."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(repeat):
        for name, action in actions.items():
            start = time.perf_counter()
            action()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: sorted(found) for name, found in times.items()}


def bench_append(root: Path) -> None:
    message = Message(role="assistant", text="Planning the change. " * 40)  # ~1 KB line
    for durable in (True, False):
        stores = {name: open_store(root / f"{name}-{durable}", durable) for name, open_store in STORES.items()}
        for store in stores.values():
            store.create(SessionRecord(session_id="s", cwd="/w"))
        appends = {name: functools.partial(store.append, "s", message) for name, store in stores.items()}
        for name, times in interleaved_ms(appends, 500).items():
            label = "durable (as served)" if durable else "no syncs"
            print(
                f"append, {label:19} {name:6}  median {statistics.median(times) * 1000:6.0f} µs"
                f"   p95 {times[int(len(times) * 0.95)] * 1000:6.0f} µs"
            )


def bench_load(root: Path) -> None:
    history = realistic_history(1000, random.Random(1))
    stores = {name: open_store(root / name, False) for name, open_store in STORES.items()}
    for store in stores.values():
        store.create(SessionRecord(session_id="big", cwd="/w"))
        for message in history:
            store.append("big", message)
    warm = interleaved_ms({name: functools.partial(store.load, "big") for name, store in stores.items()}, 41)
    cold = interleaved_ms(
        {
            name: lambda name=name, open_store=open_store: open_store(root / name, True).load("big")
            for name, open_store in STORES.items()
        },
        21,
    )
    for name in STORES:
        print(
            f"load 1,000 messages             {name:6}  median {statistics.median(warm[name]):6.2f} ms"
            f"   (new store instance: {statistics.median(cold[name]):.2f} ms)"
        )


def bench_list(root: Path) -> None:
    for name, open_store in STORES.items():
        store = open_store(root / name, False)
        start = time.perf_counter()
        for n in range(SESSIONS):
            cwd = f"/home/dev/project-{n % CWDS}"
            store.create(SessionRecord(session_id=f"session-{n:05d}", cwd=cwd, title=f"Session {n}"))
        for n in range(0, SESSIONS, 7):
            store.append(f"session-{n:05d}", user("hi"))
        setup = time.perf_counter() - start
        one_cwd = median_ms(lambda store=store: store.list("/home/dev/project-42"), 21)
        every = median_ms(lambda store=store: store.list(None), 21)
        cold = median_ms(lambda name=name, open_store=open_store: open_store(root / name, True).list(None), 11)
        print(
            f"list among 10,000 sessions      {name:6}  one cwd {one_cwd:6.2f} ms   all, first page {every:6.2f} ms"
            f"   (new store instance: {cold:.2f} ms; setup {setup:.1f} s)   goal ≤ 50 ms"
        )
    start = time.perf_counter()
    imported = import_file_store(connect(root / "import.db"), root / "files" / "sessions")
    print(f"import of the 10,000-session file store: {time.perf_counter() - start:6.2f} s   ({imported})")
    bench_list_over_the_wire(root / "sqlite")


def bench_list_over_the_wire(config: Path) -> None:
    """session/list through the real `iac-code acp` on the 10,000 sessions of `config`'s database."""
    agent = AgentProcess(model_env("http://127.0.0.1:9", config))
    agent.initialize()
    for label, params in (("all, first page", {}), ("one cwd", {"cwd": "/home/dev/project-42"})):
        agent.result("session/list", params)  # the first call also waits for the store to open
        times = timings_ms(lambda params=params: agent.result("session/list", params), 21)
        print(
            f"session/list over stdio, 10,000 sessions, {label + ':':16} {statistics.median(times):6.2f} ms   goal ≤ 50 ms"
        )
    agent.close()


def bench_load_over_the_wire(root: Path) -> None:
    """session/load of a 1,000-message session through the real `iac-code acp` (its default store): read,
    repair check, replay of every message as session/update notifications, then the response."""
    workspace = root / "work"
    workspace.mkdir(parents=True)
    store = _sqlite(root / "config", False)
    store.create(SessionRecord(session_id="big", cwd=str(workspace)))
    for message in realistic_history(1000, random.Random(1)):
        store.append("big", message)
    store.close()
    agent = AgentProcess(model_env("http://127.0.0.1:9", root / "config"))
    agent.initialize()
    params = {"sessionId": "big", "cwd": str(workspace), "mcpServers": []}
    times, updates = [], 0
    for _ in range(7):
        started = time.perf_counter()
        _, seen = agent.response(agent.start_request("session/load", params))
        times.append(time.perf_counter() - started)
        updates = len(seen)
        agent.call("session/close", {"sessionId": "big"})  # the next load reads the database again
    agent.close()
    print(
        f"session/load over stdio, 1,000 messages: {statistics.median(times) * 1000:7.2f} ms"
        f"   ({updates:,} updates replayed before the response)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        bench_append(Path(temp) / "append")
        bench_load(Path(temp) / "load")
        bench_list(Path(temp) / "list")
        bench_load_over_the_wire(Path(temp) / "wire")


if __name__ == "__main__":
    main()
