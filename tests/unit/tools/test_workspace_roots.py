"""Confinement with several roots (ACP's additionalDirectories): a path inside any root is inside the workspace,
relative paths start from the cwd, a link out of every root is refused, and the files tools open a path from a
descriptor of the root that holds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.tools.backends import LocalIO
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from iac_code.tools.search import GlobTool, GrepTool
from iac_code.tools.workspace import relative_to_workspace, resolve_in_workspace, root_of


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    path = tmp_path / "modules"
    path.mkdir()
    return path


def test_a_path_in_any_root_resolves_and_relative_paths_start_from_the_cwd(workspace: Path, extra: Path) -> None:
    roots = (workspace, extra)
    assert resolve_in_workspace(roots, str(extra / "vpc" / "main.tf")) == extra.resolve() / "vpc" / "main.tf"
    assert resolve_in_workspace(roots, "main.tf") == workspace.resolve() / "main.tf"
    assert resolve_in_workspace(roots, "../modules/a.tf") == extra.resolve() / "a.tf"  # `..` into another root
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, str(extra / "a.tf"))  # the cwd alone: the directory is outside


def test_a_path_outside_every_root_is_refused_naming_them(workspace: Path, extra: Path, outside: Path) -> None:
    with pytest.raises(ToolError) as refused:
        resolve_in_workspace((workspace, extra), str(outside / "secret.txt"))
    assert str(refused.value) == (
        f"path {str(outside / 'secret.txt')!r} is outside the workspace {workspace.resolve()}, {extra.resolve()}"
    )


def test_a_link_from_an_additional_root_to_the_outside_is_refused(workspace: Path, extra: Path, outside: Path) -> None:
    (extra / "link").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace((workspace, extra), str(extra / "link" / "secret.txt"))


def test_the_root_holding_a_path_is_the_innermost(workspace: Path) -> None:
    inner = workspace / "envs"
    inner.mkdir()
    roots = (workspace, inner)
    assert root_of(roots, inner.resolve() / "prod.tf") == inner.resolve()
    assert root_of(roots, workspace.resolve() / "a.tf") == workspace.resolve()
    with pytest.raises(ToolError, match="outside the workspace"):
        root_of(roots, Path("/etc/passwd"))


def test_paths_in_another_root_are_named_absolute(workspace: Path, extra: Path) -> None:
    roots = (workspace, extra)
    assert relative_to_workspace(roots, workspace.resolve() / "a" / "b.tf") == "a/b.tf"
    assert relative_to_workspace(roots, workspace.resolve()) == "."
    assert relative_to_workspace(roots, extra.resolve() / "c.tf") == f"{extra.resolve()}/c.tf"


async def test_the_file_tools_read_write_and_edit_in_an_additional_root(workspace: Path, extra: Path) -> None:
    ctx = ToolContext(workspace=workspace, io=LocalIO((workspace, extra)))
    assert ctx.roots == (workspace.resolve(), extra.resolve())
    target = str(extra / "new" / "main.tf")
    await WriteFileTool().run({"path": target, "content": "a = 1\n"}, ctx)
    await EditFileTool().run({"path": target, "old_string": "a = 1", "new_string": "a = 2"}, ctx)
    read = await ReadFileTool().run({"path": target}, ctx)
    assert (extra / "new" / "main.tf").read_text() == "a = 2\n" and "a = 2" in read.text
    alone = ToolContext(workspace=workspace)
    with pytest.raises(ToolError, match="outside the workspace"):
        await ReadFileTool().run({"path": target}, alone)


async def test_a_swapped_directory_in_an_additional_root_is_not_followed(
    workspace: Path, extra: Path, outside: Path
) -> None:
    """The open walks from the additional root's descriptor without following links, as from the cwd's."""
    ctx = ToolContext(workspace=workspace, io=LocalIO((workspace, extra)))
    (extra / "sub").symlink_to(outside)
    with pytest.raises(ToolError):
        await ctx.io.read_text(extra.resolve() / "sub" / "secret.txt")  # judged as if sub were a directory


async def test_grep_and_glob_search_an_additional_root_and_print_absolute_paths(workspace: Path, extra: Path) -> None:
    (extra / "vpc").mkdir()
    (extra / "vpc" / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    ctx = ToolContext(workspace=workspace, io=LocalIO((workspace, extra)))
    found = await GlobTool().run({"pattern": "*.tf", "path": str(extra)}, ctx)
    assert found.text == f"{extra.resolve()}/vpc/main.tf"
    matched = await GrepTool().run({"pattern": "aws_vpc", "path": str(extra / "vpc" / "main.tf")}, ctx)
    assert matched.text == f'{extra.resolve()}/vpc/main.tf:1:resource "aws_vpc" "main" {{}}'
