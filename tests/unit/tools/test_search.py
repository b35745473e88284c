import asyncio
import os
from pathlib import Path

import pytest
from tests.child_report import OWN_GROUP, VARIABLE, reporting_program
from tests.processes import eventually, process_alive

from iac_code.tools import search
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.search import GlobTool, GrepTool


@pytest.fixture
def project(workspace: Path) -> Path:
    """A small IaC tree with an ignored directory, a .git directory and hidden files."""
    files = {
        "main.tf": 'resource "alicloud_vpc" "main" {\n  cidr_block = "10.0.0.0/8"\n}\n',
        "variables.tf": 'variable "region" {\n  default = "cn-hangzhou"\n}\n',
        "modules/vpc/main.tf": 'resource "alicloud_vswitch" "a" {}\n# VPC module\n',
        "k8s/deploy.yaml": "kind: Deployment\nmetadata:\n  name: vpc-web\n",
        ".github/workflows/ci.yml": "run: terraform validate  # vpc\n",
        "build/generated.tf": 'resource "alicloud_vpc" "generated" {}\n',
        ".git/config": "[remote] url = vpc\n",
        ".git/objects/x.tf": 'resource "alicloud_vpc" "in_git" {}\n',
        ".gitignore": "build/\n",
    }
    for name, text in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return workspace


async def grep(ctx: ToolContext, **args: object) -> str:
    return (await GrepTool().run(dict(args), ctx)).text


async def test_grep_content_respects_gitignore_and_skips_git(ctx: ToolContext, project: Path) -> None:
    text = await grep(ctx, pattern="alicloud_vpc")
    assert text.splitlines() == ['main.tf:1:resource "alicloud_vpc" "main" {']


async def test_grep_files_mode_is_sorted_and_includes_hidden_files(ctx: ToolContext, project: Path) -> None:
    text = await grep(ctx, pattern="vpc", output_mode="files_with_matches", case_insensitive=True)
    assert text.splitlines() == [".github/workflows/ci.yml", "k8s/deploy.yaml", "main.tf", "modules/vpc/main.tf"]


async def test_grep_case_sensitivity(ctx: ToolContext, project: Path) -> None:
    assert (await grep(ctx, pattern="VPC module")).splitlines() == ["modules/vpc/main.tf:2:# VPC module"]
    assert (await grep(ctx, pattern="vpc module")).startswith("No matches")
    assert (await grep(ctx, pattern="vpc module", case_insensitive=True)).splitlines() == [
        "modules/vpc/main.tf:2:# VPC module"
    ]


async def test_grep_glob_filter_and_path(ctx: ToolContext, project: Path) -> None:
    text = await grep(ctx, pattern="vpc", glob="*.yaml", output_mode="files_with_matches")
    assert text.splitlines() == ["k8s/deploy.yaml"]
    in_module = await grep(ctx, pattern="resource", path="modules")
    assert in_module.splitlines() == ['modules/vpc/main.tf:1:resource "alicloud_vswitch" "a" {}']
    one_file = await grep(ctx, pattern="default", path="variables.tf")
    assert one_file.splitlines() == ['variables.tf:2:  default = "cn-hangzhou"']


async def test_grep_context_lines(ctx: ToolContext, project: Path) -> None:
    text = await grep(ctx, pattern="cidr_block", context=1)
    assert text.splitlines() == [
        'main.tf-1-resource "alicloud_vpc" "main" {',
        'main.tf:2:  cidr_block = "10.0.0.0/8"',
        "main.tf-3-}",
    ]


async def test_grep_pattern_starting_with_a_dash_is_a_pattern(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x --files y\n")
    assert (await grep(ctx, pattern="--files")).splitlines() == ["a.txt:1:x --files y"]


async def test_grep_caps_results(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "many.txt").write_text("".join(f"hit {i}\n" for i in range(50)))
    text = await grep(ctx, pattern="hit", max_results=10)
    lines = text.splitlines()
    assert lines[:10] == [f"many.txt:{i + 1}:hit {i}" for i in range(10)]
    assert "Stopped at 10 lines" in lines[-1]


async def test_grep_errors(ctx: ToolContext, project: Path) -> None:
    with pytest.raises(ToolError, match="grep failed"):
        await grep(ctx, pattern="(unclosed")
    with pytest.raises(ToolError, match="outside the workspace"):
        await grep(ctx, pattern="x", path="..")
    with pytest.raises(ToolError, match="not found"):
        await grep(ctx, pattern="x", path="nope")


async def test_grep_does_not_follow_symlinks_out(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "ext").symlink_to(outside)
    (workspace / "a.txt").write_text("nothing\n")
    assert (await grep(ctx, pattern="secret")).startswith("No matches")


async def test_glob_is_newest_first_and_respects_gitignore(ctx: ToolContext, project: Path) -> None:
    for age, name in enumerate(["variables.tf", "modules/vpc/main.tf", "main.tf"]):
        os.utime(project / name, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    text = (await GlobTool().run({"pattern": "**/*.tf"}, ctx)).text
    assert text.splitlines() == ["variables.tf", "modules/vpc/main.tf", "main.tf"]


async def test_glob_in_a_subdirectory_returns_workspace_relative_paths(ctx: ToolContext, project: Path) -> None:
    text = (await GlobTool().run({"pattern": "*.tf", "path": "modules"}, ctx)).text
    assert text.splitlines() == ["modules/vpc/main.tf"]
    anchored = (await GlobTool().run({"pattern": "vpc/*.tf", "path": "modules"}, ctx)).text
    assert anchored.splitlines() == ["modules/vpc/main.tf"]


async def test_glob_hidden_files_and_no_match(ctx: ToolContext, project: Path) -> None:
    assert (await GlobTool().run({"pattern": "*.yml"}, ctx)).text == ".github/workflows/ci.yml"
    assert (await GlobTool().run({"pattern": "*.hcl"}, ctx)).text.startswith("No files match")


async def test_glob_is_capped(ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "GLOB_MAX_FILES", 3)
    for i in range(5):
        (workspace / f"f{i}.tf").write_text("")
    lines = (await GlobTool().run({"pattern": "*.tf"}, ctx)).text.splitlines()
    assert len(lines) == 4 and lines[-1].startswith("[2 more files not shown")


async def test_glob_refuses_paths_outside(ctx: ToolContext, project: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await GlobTool().run({"pattern": "*", "path": "/etc"}, ctx)


def test_titles() -> None:
    assert GlobTool().title({"pattern": "**/*.tf"}) == "Find **/*.tf"
    assert GrepTool().title({"pattern": "vpc", "path": "modules"}) == "Search 'vpc' in modules"


async def test_cancelling_a_search_kills_ripgrep_and_its_group(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_rg = workspace.parent / "slow-rg"
    slow_rg.write_text(f"#!/bin/bash\nsleep 30 & echo $! > {workspace.parent}/rg-child.pid\nwait\n")
    slow_rg.chmod(0o755)
    monkeypatch.setattr(search, "ripgrep_path", lambda: str(slow_rg))
    task = asyncio.create_task(GrepTool().run({"pattern": "x"}, ctx))
    pid_file = workspace.parent / "rg-child.pid"
    assert await eventually(5.0, lambda: pid_file.exists() and pid_file.read_text().strip())
    child = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await eventually(1.0, lambda: not process_alive(child))


async def test_ripgrep_runs_in_its_own_group_without_credentials(
    ctx: ToolContext, workspace: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-only-not-a-secret")
    ripgrep = reporting_program(tmp_path_factory.mktemp("bin"), "rg")
    monkeypatch.setattr(search, "find_ripgrep", lambda: str(ripgrep))
    lines, _, code, _ = await search.run_ripgrep(["--files"], workspace, None)
    assert code == 0
    assert lines[0] == OWN_GROUP
    assert f"{VARIABLE}PATH" in lines
    assert f"{VARIABLE}AWS_SECRET_ACCESS_KEY" not in lines
