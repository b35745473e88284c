"""Permission options, the client's answer, and what a session remembers.

Decisions follow the *kind* of the option the client picked. Option ids equal their kinds, so the
seed's flat answer `{"outcome": "allowed", "option_id": "allow_once"}` matches too.
"""

from __future__ import annotations

from typing import Any, Literal

from acp.schema import PermissionOption

from iac_code.tools.base import Category

Choice = Literal["allow_once", "allow_always", "reject_once", "reject_always", "cancelled"]
Mode = Literal["default", "accept-edits", "read-only"]

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
_KIND_BY_ID = {option.option_id: option.kind for option in OPTIONS}


def parse_answer(answer: Any) -> Choice:
    """Read a `session/request_permission` result, official or flat. Anything unclear denies."""
    if not isinstance(answer, dict):
        return "reject_once"
    outcome = answer.get("outcome")
    fields = outcome if isinstance(outcome, dict) else answer
    word = fields.get("outcome")
    if word == "cancelled":
        return "cancelled"
    if word not in ("selected", "allowed"):
        return "reject_once"
    option_id = fields.get("optionId", fields.get("option_id"))
    if option_id is None and word == "allowed":
        return "allow_once"
    return _KIND_BY_ID.get(option_id, "reject_once") if isinstance(option_id, str) else "reject_once"


def decide_without_asking(
    category: Category, mode: Mode, remembered: Literal["allow", "reject"] | None
) -> Literal["allow", "deny"] | None:
    """The decision the session can take alone, or None when the client must be asked."""
    if category == "read":
        return "allow"
    if mode == "read-only":
        return "deny"
    if remembered is not None:
        return "allow" if remembered == "allow" else "deny"
    if mode == "accept-edits" and category == "write":
        return "allow"
    return None
