import os
from pathlib import Path

import pytest

from iac_code.tools.base import ToolError
from iac_code.tools.workspace import resolve_in_workspace, shorten, truncate_middle


def test_relative_and_absolute_paths_inside_resolve(workspace: Path) -> None:
    (workspace / "main.tf").write_text("")
    assert resolve_in_workspace(workspace, "main.tf") == workspace.resolve() / "main.tf"
    assert resolve_in_workspace(workspace, str(workspace / "main.tf")) == workspace.resolve() / "main.tf"
    assert resolve_in_workspace(workspace, ".") == workspace.resolve()


def test_missing_file_in_missing_directories_is_allowed(workspace: Path) -> None:
    resolved = resolve_in_workspace(workspace, "modules/vpc/new.tf")
    assert resolved == workspace.resolve() / "modules" / "vpc" / "new.tf"


@pytest.mark.parametrize("path", ["../x", "modules/../../x", "a/b/../../../outside/secret.txt"])
def test_dotdot_escape_is_refused(workspace: Path, path: str) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, path)


def test_error_message_names_path_and_workspace(workspace: Path) -> None:
    with pytest.raises(ToolError) as info:
        resolve_in_workspace(workspace, "../x")
    assert str(info.value) == f"path '../x' is outside the workspace {workspace.resolve()}"


def test_absolute_path_outside_is_refused(workspace: Path, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(workspace, "/etc/passwd")


def test_sibling_with_common_prefix_is_outside(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "ws2").mkdir()
    with pytest.raises(ToolError):
        resolve_in_workspace(workspace, str(tmp_path / "ws2" / "f"))


def test_symlinked_file_and_directory_escapes_are_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "not-yet.txt")
    for path in ("link.txt", "linkdir/secret.txt", "linkdir/new/file.tf", "dangling"):
        with pytest.raises(ToolError, match="outside the workspace"):
            resolve_in_workspace(workspace, path)


def test_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to(workspace / "real")
    assert resolve_in_workspace(workspace, "alias/x.tf") == workspace.resolve() / "real" / "x.tf"


def test_workspace_given_through_a_symlink(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    assert resolve_in_workspace(alias, "main.tf") == workspace.resolve() / "main.tf"


def test_symlink_loop_is_an_error(workspace: Path) -> None:
    os.symlink(workspace / "loop", workspace / "loop")
    with pytest.raises(ToolError):
        resolve_in_workspace(workspace, "loop/x")


def test_truncate_middle_keeps_head_and_tail() -> None:
    text = "HEAD" + "x" * 1000 + "TAIL"
    cut = truncate_middle(text, 100)
    assert cut.startswith("HEAD") and cut.endswith("TAIL")
    assert "[... 908 characters cut ...]" in cut
    assert truncate_middle("short", 100) == "short"


def test_shorten() -> None:
    assert shorten("terraform validate") == "terraform validate"
    assert shorten("a" * 100, 10) == "a" * 9 + "…"
    assert shorten("first line\nsecond") == "first line…"
