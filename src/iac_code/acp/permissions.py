"""Permission options as ACP shows them, and the client's answer read back.

Decisions follow the *kind* of the option the client picked. Option ids equal their kinds, so the
seed's flat answer `{"outcome": "allowed", "option_id": "allow_once"}` matches too. What to ask, and
when, is the policy's business (agent/policy.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import PermissionOption

from iac_code.agent.policy import EVERY_OPTION, Choice, OptionKind

_NAMES: dict[OptionKind, str] = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}


def permission_options(kinds: Sequence[OptionKind]) -> list[PermissionOption]:
    return [PermissionOption(option_id=kind, name=_NAMES[kind], kind=kind) for kind in kinds]


def parse_answer(answer: Any, offered: Sequence[OptionKind] = EVERY_OPTION) -> Choice:
    """Read a `session/request_permission` result, official or flat. Anything unclear, or an option that
    was not offered, denies."""
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
    for kind in offered:
        if option_id == kind:
            return kind
    return "reject_once"
