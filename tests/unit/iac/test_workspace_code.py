"""Which checker runs ask before starting code the workspace ships (tflint plugins here; terraform's
providers are tested end to end in tests/e2e/acp/test_workspace_code.py), and what a refusal leaves out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.unit.iac.test_external_tools import TFLINT_OUTPUT, fake_tool

from iac_code.iac.cache import ResultCache
from iac_code.iac.engine import NO_ONE_TO_ASK
from iac_code.tools.base import Access, ToolContext
from iac_code.tools.iac_check import IacCheckTool


class Asker:
    """A request_access that records the questions and answers with `refusal` (None: allowed)."""

    def __init__(self, refusal: str | None) -> None:
        self.refusal = refusal
        self.asked: list[tuple[str, Access, str]] = []

    async def __call__(self, subject: str, access: Access, question: str) -> str | None:
        self.asked.append((subject, access, question))
        return self.refusal


def check(workspace: Path, asker: Asker | None) -> dict[str, Any]:
    tool = IacCheckTool(cache=ResultCache(None))
    context = ToolContext(workspace=workspace, request_access=asker)
    return asyncio.run(tool.run({"checks": ["tflint"]}, context)).raw_output


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two Terraform directories, `net` and `app`, and a stand-in tflint on PATH."""
    root = tmp_path / "ws"
    for name in ("net", "app"):
        (root / name).mkdir(parents=True)
        (root / name / "main.tf").write_text('variable "x" {}\n')
    fake_tool(tmp_path / "bin", "tflint", "TFLint version 0.50.3", TFLINT_OUTPUT)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return root


def test_without_shipped_plugins_nothing_is_asked(workspace: Path) -> None:
    (workspace / ".tflint.hcl").write_text('plugin "aws" {\n  enabled = true\n}\n')  # the user's own plugins
    asker = Asker(None)
    raw = check(workspace, asker)
    assert asker.asked == [] and raw["ran"] == ["tflint"] and raw["skipped"] == []


def test_plugins_beside_a_directory_are_asked_once_and_a_refusal_leaves_only_that_directory_out(
    workspace: Path,
) -> None:
    (workspace / "net" / ".tflint.d" / "plugins").mkdir(parents=True)
    asker = Asker("Permission denied.")
    raw = check(workspace, asker)
    assert asker.asked == [
        (
            "iac_check:tflint",
            "workspace_code",
            "iac_check wants to run tflint, which starts the tflint plugins in net/.tflint.d",
        )
    ]
    assert raw["ran"] == ["tflint"]  # app was checked
    assert {f["file"] for f in raw["findings"]} == {"app/main.tf"}
    assert raw["skipped"] == [
        {"tool": "tflint", "reason": "Permission denied (tflint would start the tflint plugins in net/.tflint.d)"}
    ]


def test_a_plugin_dir_in_the_workspace_config_concerns_every_directory(workspace: Path) -> None:
    (workspace / ".tflint.hcl").write_text('config {\n  plugin_dir = "./tools/plugins"\n}\n')
    asker = Asker(None)
    raw = check(workspace, asker)
    (question,) = {q for _, _, q in asker.asked}
    assert question.endswith("the plugins in the plugin_dir that .tflint.hcl names")
    assert raw["ran"] == ["tflint"] and {f["file"] for f in raw["findings"]} == {"app/main.tf", "net/main.tf"}


def test_with_no_one_to_ask_the_code_does_not_run(workspace: Path) -> None:
    (workspace / ".tflint.d").mkdir()
    raw = check(workspace, None)
    assert raw["ran"] == [] and raw["findings"] == []
    (skipped,) = raw["skipped"]
    assert skipped["reason"].startswith(NO_ONE_TO_ASK)
