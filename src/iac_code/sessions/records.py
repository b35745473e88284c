"""What the store's files may hold, checked field by field as they are read back.

The files are ours, but a person (or another program) can edit them: a value of the wrong type
that got into memory would break later, far away and for everyone (one `"cwd": 5` made every
`list` fail). A line or record that does not pass is treated as unreadable, like a torn one.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, get_args

from iac_code.messages import Message, Role, ToolCall
from iac_code.safe_json import loads
from iac_code.sessions.disk import read_regular
from iac_code.sessions.keys import SESSION_ID
from iac_code.sessions.store import Decision, SessionRecord

RECORD_FIELDS = frozenset(SessionRecord.__dataclass_fields__)
_TEXT_FIELDS = ("cwd", "title", "created_at", "updated_at", "model", "mode", "owner")
# absent from what stores wrote before principals (owner), additionalDirectories and options existed
_OPTIONAL_FIELDS = frozenset({"owner", "additional_directories", "options"})
_DECISIONS = frozenset(get_args(Decision))
_ROLES = frozenset(get_args(Role))
_MESSAGE_TEXT = ("text", "thinking", "thinking_signature", "tool_call_id", "tool_name")
_MESSAGE_FLAGS = ("is_error", "summary")


def record_problem(data: Any, *, complete: bool = True) -> str | None:
    """Why `data` is not a SessionRecord as asdict() writes it; None when it is.

    `complete=False` accepts missing optional fields (they take their defaults)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    unknown = data.keys() - RECORD_FIELDS
    if unknown:
        return f"unknown field {sorted(unknown)[0]!r}"
    missing = (RECORD_FIELDS - _OPTIONAL_FIELDS if complete else {"session_id", "cwd"}) - data.keys()
    if missing:
        return f"missing field {sorted(missing)[0]!r}"
    if not isinstance(data["session_id"], str) or not SESSION_ID.fullmatch(data["session_id"]):
        return "session_id is not a session id"
    for name in _TEXT_FIELDS:
        if name in data and not isinstance(data[name], str):
            return f"{name} must be a string"
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict) or not all(
        isinstance(tool, str) and decision in _DECISIONS for tool, decision in permissions.items()
    ):
        return 'permissions must map tool names to "allow" or "reject"'
    directories = data.get("additional_directories", [])
    if not isinstance(directories, list) or not all(isinstance(d, str) for d in directories):
        return "additional_directories must be a list of paths"
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(value, bool) for value in options.values()):
        return "options must map option ids to true or false"
    return None


def index_entry_problem(entry: Any) -> str | None:
    """Why `entry` is not an index line ({"put": record} | {"touch": id, "at": time} | {"drop": id})."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    if entry.keys() == {"put"}:
        return record_problem(entry["put"])
    if entry.keys() == {"touch", "at"}:
        return None if isinstance(entry["touch"], str) and isinstance(entry["at"], str) else "touch of wrong types"
    if entry.keys() == {"drop"}:
        return None if isinstance(entry["drop"], str) else "drop of a wrong type"
    return "not an index entry"


def message_from_data(data: Any) -> Message:
    """The Message a log line holds; ValueError naming the first field of the wrong type."""
    if not isinstance(data, dict):
        raise ValueError("a message must be a JSON object")
    if data.get("role") not in _ROLES:
        raise ValueError("role must be user, assistant or tool")
    for name in _MESSAGE_TEXT:
        if name in data and not isinstance(data[name], str):
            raise ValueError(f"{name} must be a string")
    for name in _MESSAGE_FLAGS:
        if name in data and not isinstance(data[name], bool):
            raise ValueError(f"{name} must be true or false")
    kept = data.get("kept", 0)
    if isinstance(kept, bool) or not isinstance(kept, int) or kept < 0:
        raise ValueError("kept must be a non-negative integer")
    calls = data.get("tool_calls", [])
    if not isinstance(calls, list) or not all(_is_tool_call(call) for call in calls):
        raise ValueError("tool_calls must be a list of {id, name, arguments}")
    return Message.from_dict(data)


def _is_tool_call(call: Any) -> bool:
    return (
        isinstance(call, dict)
        and call.keys() == ToolCall.__dataclass_fields__.keys()
        and isinstance(call["id"], str)
        and isinstance(call["name"], str)
        and isinstance(call["arguments"], dict)
    )


def read_meta(session_dir: Path) -> dict[str, Any]:
    """The record a session's meta.json holds, complete; FileNotFoundError when there is none,
    ValueError (naming meta.json and the problem) or OSError when it cannot be read back."""
    try:
        data = loads(read_regular(session_dir / "meta.json"))
    except ValueError as exc:
        raise ValueError(f"meta.json: {exc}") from None
    problem = record_problem(data, complete=False)
    if problem is not None:
        raise ValueError(f"meta.json: {problem}")
    return asdict(SessionRecord(**data))


def meta_problem(session_dir: Path) -> str | None:
    """Why the session's meta.json does not read back; None when it does or when there is none."""
    try:
        read_meta(session_dir)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        return str(exc)
    except OSError as exc:
        return f"meta.json: {exc.strerror}"
    return None
