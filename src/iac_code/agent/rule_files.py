"""Where a workspace's project rules live: `.iac-code/settings.json` in each directory from the repository root
(the nearest `.git`) down to the workspace, or the workspace's own outside a repository. Kept apart from
rules.py (which reads them) so that ACP's early `session/new` can see whether there are any without
importing the rule machinery."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

PROJECT_FILE = Path(".iac-code") / "settings.json"


def project_files(project_dirs: Sequence[Path]) -> list[Path]:
    """The project rule files of a workspace whose project directories (repository.project_directories, the
    workspace first) are `project_dirs`: the repository root's first."""
    return [d / PROJECT_FILE for d in reversed(project_dirs) if (d / PROJECT_FILE).is_file()]
