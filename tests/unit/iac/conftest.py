import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from iac_code.iac.cache import ResultCache
from iac_code.iac.workers import shutdown_workers
from iac_code.tools.base import ToolContext
from iac_code.tools.iac_check import IacCheckTool

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "iac"


def copy_fixtures(destination: Path) -> Path:
    """The committed fixture tree, copied so a test may edit or initialise it."""
    workspace = destination / "ws"
    shutil.copytree(FIXTURES, workspace)
    return workspace


def run_tool(workspace: Path, args: dict[str, Any] | None = None, tool: IacCheckTool | None = None) -> Any:
    tool = tool or IacCheckTool(cache=ResultCache(None))
    return asyncio.run(tool.run(args or {}, ToolContext(workspace=workspace)))


@pytest.fixture(scope="session", autouse=True)
def _stop_warm_workers() -> Any:
    """checkov and cfn-lint workers are shared by every test (warm after the first), stopped at the end."""
    yield
    shutdown_workers()


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One full iac_check of the fixture tree, shared by the tests that read its findings."""
    workspace = copy_fixtures(tmp_path_factory.mktemp("iac"))
    return workspace, run_tool(workspace)


def findings_of(raw: dict[str, Any], tool: str, file: str | None = None) -> list[tuple[str, int | None]]:
    return [
        (f["rule"], f["line"]) for f in raw["findings"] if f["tool"] == tool and (file is None or f["file"] == file)
    ]
