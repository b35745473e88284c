"""The session modes, by id, name and what each does (policy.py's table says how each judges a call)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["default", "accept-edits", "read-only", "plan", "bypass-permissions"]


@dataclass(frozen=True)
class ModeInfo:
    id: Mode
    name: str
    description: str


MODES: tuple[ModeInfo, ...] = (
    ModeInfo("default", "Default", "Ask before writing files or running commands"),
    ModeInfo("accept-edits", "Accept edits", "Write files without asking; ask before commands"),
    ModeInfo("read-only", "Read only", "Never write files or run commands"),
    ModeInfo("plan", "Plan", "Explore and propose a plan: no file changes; ask before commands"),
    ModeInfo(
        "bypass-permissions",
        "Bypass permissions",
        "Run without asking, except infrastructure changes and MCP tools that may act outside the workspace",
    ),
)
MODE_IDS: tuple[Mode, ...] = tuple(mode.id for mode in MODES)
