"""Where a workspace's project files are looked for: in each directory from the workspace up to the repository
root (the nearest directory holding `.git`), or in the workspace alone outside a repository. The instruction
files, the project rules and the skills all follow this one rule."""

from __future__ import annotations

from pathlib import Path


def project_directories(workspace: Path) -> list[Path]:
    """The workspace (resolved), then each parent up to the repository root: nearest first."""
    here = workspace.resolve()
    chain = [here, *here.parents]
    root = next((directory for directory in chain if (directory / ".git").exists()), here)
    return chain[: chain.index(root) + 1]
