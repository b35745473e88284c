from pathlib import Path

import pytest

from iac_code.tools.base import ToolContext


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a file no tool may touch."""
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("top secret\n")
    return other


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)
