"""Where a session works, as one value: resolved once when the session opens (host/workspaces.py) and handed
down as it is, so that nothing below works out the project's directories, rules or skills again from a path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iac_code.agent.rules import Rules
from iac_code.skills.discovery import SkillCatalog


@dataclass(frozen=True)
class Workspace:
    root: Path  # the session's cwd, resolved: where its commands run, and what relative paths start from
    project_dirs: tuple[Path, ...]  # root up to the repository root, nearest first: where project files are read
    rules: Rules  # the permission rules in force when it opened, the project's trust included
    skills: SkillCatalog  # the skills found for it: the project's, the user's, the bundled ones
    # ACP's additionalDirectories, admitted and resolved: roots beside the cwd, as much inside the workspace
    additional: tuple[Path, ...] = ()
    # their project directories (each root up to its repository root) that project_dirs does not hold already
    additional_project_dirs: tuple[Path, ...] = ()

    @property
    def roots(self) -> tuple[Path, ...]:
        """The directories the session may act in: the cwd first."""
        return (self.root, *self.additional)

    @property
    def every_project_dir(self) -> tuple[Path, ...]:
        """Where instruction files and skills are read: the cwd's directories, then the additional roots'."""
        return (*self.project_dirs, *self.additional_project_dirs)
