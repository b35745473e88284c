"""The iac_check tool as the agent calls it: its output contract (rawOutput, locations, text), its
arguments, and its confinement to the workspace."""

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from iac_code.iac import walk
from iac_code.iac.cache import ResultCache
from iac_code.iac.checker import Selection, Tree, Unit
from iac_code.iac.checkers.warm import CHECKOV_HINT
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.tools.backends import LocalIO
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.iac_check import MAX_LOCATIONS, IacCheckTool

from .conftest import run_tool

FINDING_KEYS = {"tool", "rule", "severity", "file", "line", "message"}


def test_raw_output_is_the_contract(fixture_report: tuple[Path, Any]) -> None:
    workspace, result = fixture_report
    raw = result.raw_output
    assert set(raw) == {"findings", "ran", "skipped", "files"}
    assert raw["files"] == 20
    assert {"hcl-syntax", "yaml-syntax", "ros", "cfn-lint", "checkov"} <= set(raw["ran"])
    for finding in raw["findings"]:
        assert set(finding) == FINDING_KEYS
        assert finding["severity"] in ("error", "warning", "info")
        assert finding["line"] is None or (isinstance(finding["line"], int) and finding["line"] >= 1)
        assert not finding["file"].startswith("/") and (workspace / finding["file"]).exists()
    for skipped in raw["skipped"]:
        assert set(skipped) == {"tool", "reason"} and skipped["reason"]
    severities = [f["severity"] for f in raw["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    assert not result.is_error


def test_locations_point_at_the_findings(fixture_report: tuple[Path, Any]) -> None:
    workspace, result = fixture_report
    assert 0 < len(result.locations) <= MAX_LOCATIONS
    first = result.raw_output["findings"][0]
    assert result.locations[0].path == str(workspace.resolve() / first["file"])
    assert result.locations[0].line == first["line"]
    assert all(Path(location.path).is_absolute() for location in result.locations)


def test_text_groups_by_file_with_errors_first(fixture_report: tuple[Path, Any]) -> None:
    text = fixture_report[1].text
    assert text.startswith("Checked 20 infrastructure files with hcl-syntax, yaml-syntax, ros, cfn-lint, checkov")
    assert "Skipped: " in text and "tflint (" in text
    blocks = text.split("\n\n")[1:]
    assert blocks[0].splitlines()[1].startswith("  error line")
    ros = next(b for b in blocks if b.startswith("ros/stack.yaml"))
    assert "  error line 12 [ros unknown-resource-type] resource 'VSwitch': unknown type" in ros
    assert len(text) < 9_000


class FloodChecker:
    name = "flood"
    summary = "test"
    timeout = 10.0

    def version(self) -> str:
        return "1"

    def select(self, tree: Tree) -> Selection:
        return Selection(units=tree.file_units({FileKind.TERRAFORM}))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        return {
            u.rel: [Finding("flood", f"R{i}", "warning", u.rel, i + 1, "x" * 80) for i in range(100)] for u in units
        }


def test_text_is_capped_with_counts_of_what_was_left_out(tmp_path: Path) -> None:
    for index in range(10):
        (tmp_path / f"f{index}.tf").write_text("locals {}\n")
    result = run_tool(tmp_path, tool=IacCheckTool(checkers={"flood": FloodChecker()}, cache=ResultCache(None)))
    assert len(result.raw_output["findings"]) == 1000
    assert len(result.locations) == MAX_LOCATIONS
    assert len(result.text) <= 8_500
    assert len(result.text) >= 7_000  # the budget is used, not wasted
    shown = result.text.count("  warning line")
    assert f"[{1000 - shown} more findings in " in result.text and " files not shown" in result.text


def test_unknown_checker_names_are_refused_with_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"unknown checker\(s\) tfsec; valid checkers: hcl-syntax, yaml-syntax, ros"):
        run_tool(tmp_path, {"checks": ["hcl-syntax", "tfsec"]})
    with pytest.raises(ToolError, match="list of checker names"):
        run_tool(tmp_path, {"checks": "hcl-syntax"})


def test_only_the_requested_checkers_run(fixture_report: tuple[Path, Any]) -> None:
    raw = run_tool(fixture_report[0], {"path": "ros", "checks": ["ros"]}).raw_output
    assert raw["ran"] == ["ros"] and raw["skipped"] == []
    assert {f["file"] for f in raw["findings"]} == {"ros/stack.yaml"}
    assert raw["files"] == 2


def test_a_requested_checker_with_nothing_to_check_says_so(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text("locals {}\n")
    raw = run_tool(tmp_path, {"checks": ["ros"]}).raw_output
    assert raw["ran"] == [] and raw["skipped"][0]["tool"] == "ros"


def test_a_single_file(fixture_report: tuple[Path, Any]) -> None:
    raw = run_tool(fixture_report[0], {"path": "terraform/syntax_error/main.tf", "checks": ["hcl-syntax"]}).raw_output
    assert raw["findings"] == [
        {
            "tool": "hcl-syntax",
            "rule": "hcl-syntax",
            "severity": "error",
            "file": "terraform/syntax_error/main.tf",
            "line": 8,
            "message": "invalid HCL: unexpected '=' at column 19",
        }
    ]


def test_confined_to_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside.tf").write_text("x = = 1\n")
    with pytest.raises(ToolError, match="outside the workspace"):
        run_tool(workspace, {"path": "../outside.tf"})
    with pytest.raises(ToolError, match="outside the workspace"):
        run_tool(workspace, {"path": str(tmp_path / "outside.tf")})
    (workspace / "link").symlink_to(tmp_path)
    with pytest.raises(ToolError, match="outside the workspace"):
        run_tool(workspace, {"path": "link/outside.tf"})
    with pytest.raises(ToolError, match="path not found"):
        run_tool(workspace, {"path": "nope"})


def test_an_additional_directory_is_checked_from_its_own_root(tmp_path: Path) -> None:
    workspace, extra = tmp_path / "envs", tmp_path / "modules"
    (extra / "vpc").mkdir(parents=True)
    workspace.mkdir()
    (extra / "vpc" / "main.tf").write_text("x = = 1\n")
    ctx = ToolContext(workspace=workspace, io=LocalIO((workspace, extra)))
    result = asyncio.run(IacCheckTool(cache=ResultCache(None)).run({"path": str(extra), "checks": ["hcl-syntax"]}, ctx))
    assert [f["file"] for f in result.raw_output["findings"]] == ["vpc/main.tf"]
    assert result.text.startswith(f"Paths are relative to {extra.resolve()}.\n")
    assert [location.path for location in result.locations] == [str(extra.resolve() / "vpc" / "main.tf")]
    with pytest.raises(ToolError, match="outside the workspace"):
        run_tool(workspace, {"path": str(extra)})  # the cwd alone


def test_a_walk_that_cannot_list_the_files_is_the_tools_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "main.tf").write_text('resource "x" "y" {}\n')
    monkeypatch.setattr(walk, "find_ripgrep", lambda: None)  # the checkers sit below the tools: WalkFailed
    with pytest.raises(ToolError, match="ripgrep"):
        run_tool(tmp_path, {"path": "."})


def test_gitignored_files_are_not_checked(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "bad.tf").write_text("x = = 1\n")
    (tmp_path / ".terraform" / "modules").mkdir(parents=True)
    (tmp_path / ".terraform" / "modules" / "bad.tf").write_text("x = = 1\n")
    raw = run_tool(tmp_path, {"checks": ["hcl-syntax"]}).raw_output
    assert raw["files"] == 0 and raw["findings"] == []


def test_declared_as_a_read_only_tool() -> None:
    tool = IacCheckTool(cache=ResultCache(None))
    assert (tool.name, tool.category, tool.kind) == ("iac_check", "read", "search")
    assert tool.access({"path": "."}) == "read"
    assert tool.title({}) == "Check infrastructure code"
    assert tool.title({"path": "envs/prod"}) == "Check envs/prod"
    assert tool.parameters["properties"]["checks"]["items"]["enum"][:3] == ["hcl-syntax", "yaml-syntax", "ros"]
    assert "checkov" in tool.description and "ROS" in tool.description


def test_locations_for_the_client(tmp_path: Path) -> None:
    tool = IacCheckTool(cache=ResultCache(None))
    assert tool.locations({"path": "a"}, ToolContext(workspace=tmp_path)) == [str(tmp_path.resolve() / "a")]
    assert tool.locations({"path": "../x"}, ToolContext(workspace=tmp_path)) == []


def test_checkov_absent_is_skipped_with_the_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import iac_code.iac.checkers.warm as warm

    monkeypatch.setattr(warm.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    (tmp_path / "Dockerfile").write_text("FROM alpine:3.20\n")
    raw = run_tool(tmp_path, {"checks": ["checkov"]}).raw_output
    assert raw["skipped"] == [
        {
            "tool": "checkov",
            "reason": CHECKOV_HINT,
        }
    ]


def test_repeat_is_answered_from_the_cache(fixture_report: tuple[Path, Any]) -> None:
    workspace = fixture_report[0]
    tool = IacCheckTool(cache=ResultCache(None))
    first = asyncio.run(tool.run({"path": "cloudformation"}, ToolContext(workspace=workspace)))
    second = asyncio.run(tool.run({"path": "cloudformation"}, ToolContext(workspace=workspace)))
    assert second.raw_output == first.raw_output
