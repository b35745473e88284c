"""Where a session works, as one value: resolved once when the session opens (host/workspaces.py) and handed
down as it is, so that nothing below works out the project's directories, rules or skills again from a path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iac_code.agent.rules import Rules
from iac_code.skills.discovery import SkillCatalog


@dataclass(frozen=True)
class Workspace:
    root: Path  # the session's cwd, resolved: where its tools act, and what its paths are relative to
    project_dirs: tuple[Path, ...]  # root up to the repository root, nearest first: where project files are read
    rules: Rules  # the permission rules in force when it opened, the project's trust included
    skills: SkillCatalog  # the skills found for it: the project's, the user's, the bundled ones

    @property
    def roots(self) -> tuple[Path, ...]:
        """The directories the session may act in."""
        return (self.root,)
