"""A session's on/off settings, by id, name and what each does (stored with the session, each off unless set;
ACP offers them as boolean config options). Light on purpose: an early `session/new` answer lists them."""

from __future__ import annotations

from dataclasses import dataclass

CHECK_EDITS = "check_after_edit"  # agent/edit_checks.py


@dataclass(frozen=True)
class OptionInfo:
    id: str
    name: str
    description: str


OPTIONS: tuple[OptionInfo, ...] = (
    OptionInfo(
        CHECK_EDITS,
        "Check IaC files after each edit",
        "Run iac_check on the infrastructure files the agent writes, right after it writes them",
    ),
)
OPTION_IDS = frozenset(option.id for option in OPTIONS)
