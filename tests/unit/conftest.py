"""Fixtures shared by unit tests of what acts on a workspace (tools/, acp/client_io.py)."""

from pathlib import Path

import pytest


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
