"""A separate process writing to a FileSessionStore, for the concurrency and kill -9 tests.

writer.py many ROOT PREFIX SESSIONS MESSAGES   create sessions, interleave appends, retitle, delete some
writer.py loop ROOT SESSION_ID                 append a tool-calling conversation until killed
"""

import sys
from pathlib import Path

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges, SessionRecord


def turn(n: int) -> list[Message]:
    """Turn n of the loop conversation: big enough that a kill can land inside a write."""
    call = ToolCall(id=f"call_{n}", name="bash", arguments={"command": f"echo {n}", "pad": "x" * 3000})
    return [
        user(f"prompt {n}"),
        Message(role="assistant", text=f"answer {n}", tool_calls=[call]),
        tool_result(call, f"out {n}\n" * 400),
    ]


def many(root: Path, prefix: str, sessions: int, messages: int) -> None:
    store = FileSessionStore(root, durable=False)
    names = [f"{prefix}-{i}" for i in range(sessions)]
    for name in names:
        store.create(SessionRecord(session_id=name, cwd=f"/cwd/{prefix}"))
    for m in range(messages):
        for name in names:
            store.append(name, user(f"{name} message {m}"))
            store.list(None, limit=5)
    for i, name in enumerate(names):
        if i % 5 == 0:
            store.delete(name)
        else:
            store.update(name, RecordChanges(title=f"title of {name}"))


def loop(root: Path, session_id: str) -> None:
    store = FileSessionStore(root)
    store.create(SessionRecord(session_id=session_id, cwd="/cwd"))
    count = 0
    for n in range(10**9):
        for message in turn(n):
            store.append(session_id, message)
            count += 1
            print(count, flush=True)


if __name__ == "__main__":
    mode, root, *rest = sys.argv[1:]
    if mode == "many":
        many(Path(root), rest[0], int(rest[1]), int(rest[2]))
    else:
        loop(Path(root), rest[0])
