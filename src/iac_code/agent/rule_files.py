"""Where a workspace's project rules live: `.iac-code/settings.json` in each directory from the repository root
(the nearest `.git`) down to the workspace, or the workspace's own outside a repository. Kept apart from
rules.py (which reads them) so that ACP's early `session/new` can see whether there are any without
importing the rule machinery."""

from __future__ import annotations

from pathlib import Path

from iac_code.repository import project_directories

PROJECT_FILE = Path(".iac-code") / "settings.json"


def project_files(workspace: Path) -> list[Path]:
    """The project rule files that hold for `workspace`, the repository root's first."""
    return [d / PROJECT_FILE for d in reversed(project_directories(workspace)) if (d / PROJECT_FILE).is_file()]
