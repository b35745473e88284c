"""Several writers sharing one sessions directory (two editor windows), and a kill -9 mid-write."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from iac_code.messages import unanswered_tool_calls, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.repair import INTERRUPTED

WRITER = Path(__file__).with_name("writer.py")
SESSIONS, MESSAGES = 15, 20


def run_writer(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3] / "src")}
    return subprocess.Popen([sys.executable, str(WRITER), *args], stdout=subprocess.PIPE, env=env, text=True)


def check_shared_directory(root: Path, prefixes: list[str]) -> None:
    store = FileSessionStore(root)
    listed = store.list(None, limit=1000)[0]
    for line in (root / "index.jsonl").read_text().splitlines():
        json.loads(line)
    expected = {f"{p}-{i}" for p in prefixes for i in range(SESSIONS) if i % 5}
    assert {r.session_id for r in listed} == expected
    for record in listed:
        assert record.title == f"title of {record.session_id}"
        assert record.cwd == f"/cwd/{record.session_id.split('-')[0]}"
        assert store.load(record.session_id)[1] == [user(f"{record.session_id} message {m}") for m in range(MESSAGES)]
    assert {r.session_id for r in FileSessionStore(root).list("/cwd/p0", limit=1000)[0]} == {
        s for s in expected if s.startswith("p0-")
    }


def test_two_processes_share_a_directory(root: Path) -> None:
    root.mkdir()
    writers = [run_writer("many", str(root), prefix, str(SESSIONS), str(MESSAGES)) for prefix in ("p0", "p1")]
    for writer in writers:
        writer.communicate(timeout=60)
        assert writer.returncode == 0
    check_shared_directory(root, ["p0", "p1"])
    (root / "index.jsonl").unlink()  # and what the index says matches what a rebuild finds
    check_shared_directory(root, ["p0", "p1"])


def test_two_stores_in_threads_share_a_directory(root: Path) -> None:
    from . import writer

    threads = [threading.Thread(target=writer.many, args=(root, prefix, SESSIONS, MESSAGES)) for prefix in ("p0", "p1")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check_shared_directory(root, ["p0", "p1"])


def test_kill_9_while_appending_leaves_a_valid_prefix(root: Path) -> None:
    from .writer import turn

    root.mkdir()
    writer = run_writer("loop", str(root), "victim")
    durable = 0
    for line in writer.stdout:  # type: ignore[union-attr]
        durable = int(line)
        if durable >= 40:
            break
    writer.send_signal(signal.SIGKILL)
    writer.communicate(timeout=10)
    assert durable >= 40, "the writer died on its own"

    _, loaded = FileSessionStore(root).load("victim")
    written = [m for n in range(len(loaded)) for m in turn(n)]
    original = [m for m in loaded if m.text != INTERRUPTED]
    assert len(original) >= durable  # everything append() returned for survived
    assert original == written[: len(original)]  # and nothing else: an exact prefix
    assert unanswered_tool_calls(loaded) == []
    # The repair was written back: a new store loads the same history and the next append fits after it.
    store = FileSessionStore(root)
    assert store.load("victim")[1] == loaded
    store.append("victim", user("after the crash"))
    assert store.load("victim")[1] == [*loaded, user("after the crash")]
