"""Loading a log damaged by a crash: torn lines dropped, unanswered tool calls answered, repair saved."""

import json
from pathlib import Path

from iac_code.messages import Message, ToolCall, tool_result, unanswered_tool_calls, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.repair import INTERRUPTED

from .conftest import make_session


def calling(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(id=i, name="bash", arguments={"command": "ls"}) for i in ids])


def interrupted(call_id: str) -> Message:
    return tool_result(ToolCall(id=call_id, name="bash", arguments={}), INTERRUPTED, is_error=True)


def log_lines(root: Path, session_id: str) -> list[dict]:
    return [json.loads(line) for line in (root / session_id / "messages.jsonl").read_text().splitlines()]


def test_torn_last_line_is_dropped_and_the_file_truncated(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("one"))
    store.append("s1", Message(role="assistant", text="two"))
    log = root / "s1" / "messages.jsonl"
    good = log.read_bytes()
    with log.open("ab") as f:
        f.write(b'{"role":"assistant","text":"thr')
    _, messages = FileSessionStore(root).load("s1")
    assert messages == [user("one"), Message(role="assistant", text="two")]
    assert log.read_bytes() == good
    store.append("s1", user("after"))
    assert FileSessionStore(root).load("s1")[1][-1] == user("after")


def test_torn_only_line(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    (root / "s1" / "messages.jsonl").write_bytes(b'{"role":"us')
    assert store.load("s1")[1] == []
    assert (root / "s1" / "messages.jsonl").read_bytes() == b""


def test_append_after_a_torn_line_is_not_swallowed(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("one"))
    with (root / "s1" / "messages.jsonl").open("ab") as f:
        f.write(b'{"role":"assis')
    store.append("s1", user("two"))  # without a load in between
    assert FileSessionStore(root).load("s1")[1] == [user("one"), user("two")]
    assert len(log_lines(root, "s1")) == 2


def test_unreadable_middle_line_is_dropped_and_the_log_rewritten(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("one"))
    with (root / "s1" / "messages.jsonl").open("ab") as f:
        f.write(b"\x00\x00garbage\n")
    store.append("s1", user("two"))
    assert store.load("s1")[1] == [user("one"), user("two")]
    assert log_lines(root, "s1") == [user("one").to_dict(), user("two").to_dict()]


def test_dangling_calls_at_the_end_are_answered_by_an_append(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    history = [user("go"), calling("a", "b"), tool_result(ToolCall("a", "bash", {}), "ok")]
    for message in history:
        store.append("s1", message)
    inode = (root / "s1" / "messages.jsonl").stat().st_ino
    _, messages = FileSessionStore(root).load("s1")
    assert messages == [*history, interrupted("b")]
    assert unanswered_tool_calls(messages) == []
    assert (root / "s1" / "messages.jsonl").stat().st_ino == inode  # appended, not rewritten
    assert log_lines(root, "s1") == [m.to_dict() for m in messages]
    # Persisted: a second load finds nothing to repair.
    assert FileSessionStore(root).load("s1")[1] == messages


def test_dangling_calls_in_the_middle_are_answered_in_place(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    history = [
        user("first"),
        calling("a", "b"),
        tool_result(ToolCall("b", "bash", {}), "ok"),
        user("second"),  # the process died before "a" was answered, then the user went on
        calling("c"),
        Message(role="assistant", text="no result for c either"),
        user("third"),
    ]
    for message in history:
        store.append("s1", message)
    _, messages = FileSessionStore(root).load("s1")
    assert messages == [
        user("first"),
        calling("a", "b"),
        tool_result(ToolCall("b", "bash", {}), "ok"),
        interrupted("a"),
        user("second"),
        calling("c"),
        interrupted("c"),
        Message(role="assistant", text="no result for c either"),
        user("third"),
    ]
    assert log_lines(root, "s1") == [m.to_dict() for m in messages]
    assert FileSessionStore(root).load("s1")[1] == messages


def test_torn_tail_and_dangling_call_together(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("go"))
    store.append("s1", calling("a"))
    with (root / "s1" / "messages.jsonl").open("ab") as f:
        f.write(b'{"role":"tool","text":"partial resu')
    _, messages = store.load("s1")
    assert messages == [user("go"), calling("a"), interrupted("a")]
    assert log_lines(root, "s1") == [m.to_dict() for m in messages]


def test_clean_log_is_left_untouched(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("go"))
    store.append("s1", calling("a"))
    store.append("s1", tool_result(ToolCall("a", "bash", {}), "ok"))
    log = root / "s1" / "messages.jsonl"
    before = (log.read_bytes(), log.stat().st_mtime_ns)
    store.load("s1")
    assert (log.read_bytes(), log.stat().st_mtime_ns) == before
