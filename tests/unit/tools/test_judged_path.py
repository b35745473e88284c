"""The file a tool opens is the file its call was judged on: the tool opens the loop's resolution
(ToolContext.judged_path), LocalIO does not resolve an absolute path again, and confined_io walks no `..`."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.tools.backends import LocalIO
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.confined_io import read_file_bytes
from iac_code.tools.files import ReadFileTool, WriteFileTool


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "public.txt").write_text("public\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "public.txt").write_text("secret\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return root


async def test_read_file_opens_the_judged_path_not_a_new_resolution(workspace: Path) -> None:
    (workspace / "link").symlink_to("secrets/public.txt")  # the link says secrets now; it said dir/ when judged
    ctx = ToolContext(workspace, judged_path=(workspace / "dir" / "public.txt").resolve())
    assert "public" in (await ReadFileTool().run({"path": "link"}, ctx)).text
    assert "secret" not in (await ReadFileTool().run({"path": "link"}, ctx)).text


async def test_write_file_writes_the_judged_path(workspace: Path) -> None:
    (workspace / "link").symlink_to("secrets/public.txt")
    ctx = ToolContext(workspace, judged_path=(workspace / "dir" / "public.txt").resolve())
    await WriteFileTool().run({"path": "link", "content": "new\n"}, ctx)
    assert (workspace / "secrets" / "public.txt").read_text() == "secret\n"
    assert (workspace / "dir" / "public.txt").read_text() == "new\n"


async def test_local_io_does_not_follow_a_link_put_on_an_absolute_path(workspace: Path) -> None:
    judged = (workspace / "dir" / "public.txt").resolve()
    (workspace / "dir").rename(workspace / "old")
    (workspace / "dir").symlink_to("secrets")  # dir/public.txt is now secrets/public.txt by resolution
    with pytest.raises(ToolError, match="symlink"):
        await LocalIO(workspace).read_text(judged)


def test_confined_io_walks_no_dot_dot(workspace: Path) -> None:
    root = workspace.resolve()
    with pytest.raises(ToolError, match="not a plain path"):
        read_file_bytes(root, root / "dir" / ".." / ".." / "outside.txt", 1 << 20)
