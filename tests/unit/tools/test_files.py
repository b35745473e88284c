from pathlib import Path

import pytest

from iac_code.tools import confined_io, files
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.files import EditFileTool, ListFilesTool, ReadFileTool, WriteFileTool

# ---- read_file


async def test_read_numbers_lines(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "main.tf").write_text("a\nb\nc\n")
    result = await ReadFileTool().run({"path": "main.tf"}, ctx)
    assert result.text == "     1\ta\n     2\tb\n     3\tc"
    assert not result.is_error


async def test_read_offset_and_limit(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    result = await ReadFileTool().run({"path": "f.txt", "offset": 4, "limit": 3}, ctx)
    lines = result.text.splitlines()
    assert lines[:3] == ["     4\tline4", "     5\tline5", "     6\tline6"]
    assert "Lines 4-6 of 10" in result.text and "offset=7" in result.text


async def test_read_offset_past_end(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "f.txt").write_text("one\n")
    with pytest.raises(ToolError, match="past the end"):
        await ReadFileTool().run({"path": "f.txt", "offset": 5}, ctx)


async def test_read_stops_at_byte_cap_and_says_how_to_continue(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"{i:05d}" + "x" * 195 + "\n" for i in range(5000)))
    result = await ReadFileTool().run({"path": "big.txt"}, ctx)
    assert len(result.text.encode()) <= files.READ_BYTE_CAP + 200
    last_shown = int(result.text.split("\n[Lines 1-")[1].split(" ")[0])
    assert 1000 < last_shown < 2000  # the line default alone would allow 2000
    assert f"offset={last_shown + 1}" in result.text
    follow = await ReadFileTool().run({"path": "big.txt", "offset": last_shown + 1, "limit": 1}, ctx)
    assert follow.text.startswith(f"{last_shown + 1:6d}\t{last_shown:05d}")


async def test_read_cuts_a_single_huge_line(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "min.json").write_text("{" + "1" * (files.READ_BYTE_CAP * 2) + "}")
    result = await ReadFileTool().run({"path": "min.json"}, ctx)
    assert "line cut at" in result.text
    assert len(result.text) < files.READ_BYTE_CAP


async def test_read_refuses_binary_and_directories(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "p.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (workspace / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="binary"):
        await ReadFileTool().run({"path": "p.bin"}, ctx)
    with pytest.raises(ToolError, match="UTF-8"):
        await ReadFileTool().run({"path": "latin1.txt"}, ctx)
    with pytest.raises(ToolError, match="directory"):
        await ReadFileTool().run({"path": "."}, ctx)


async def test_read_missing_and_empty(ctx: ToolContext, workspace: Path) -> None:
    with pytest.raises(ToolError, match="not found"):
        await ReadFileTool().run({"path": "nope.tf"}, ctx)
    (workspace / "empty.tf").write_text("")
    assert (await ReadFileTool().run({"path": "empty.tf"}, ctx)).text == "(empty file)"


async def test_read_refuses_escapes(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside / "secret.txt")
    (workspace / "dir").symlink_to(outside)
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "link", "dir/secret.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            await ReadFileTool().run({"path": path}, ctx)


def test_read_title_and_locations(ctx: ToolContext, workspace: Path) -> None:
    tool = ReadFileTool()
    assert tool.title({"path": "main.tf"}) == "Read main.tf"
    assert tool.locations({"path": "main.tf"}, ctx) == [str(workspace.resolve() / "main.tf")]
    assert tool.locations({"path": "../x"}, ctx) == []


# ---- list_files


async def test_list_marks_directories_and_skips_git(ctx: ToolContext, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / "modules" / "vpc").mkdir(parents=True)
    (workspace / "modules" / "vpc" / "main.tf").write_text("")
    (workspace / "main.tf").write_text("")
    result = await ListFilesTool().run({}, ctx)
    assert result.text.splitlines() == ["main.tf", "modules/"]
    deep = await ListFilesTool().run({"path": "modules", "depth": 3}, ctx)
    assert deep.text.splitlines() == ["vpc/", "vpc/main.tf"]


async def test_list_does_not_enter_symlinked_directories(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "ext").symlink_to(outside)
    result = await ListFilesTool().run({"depth": 5}, ctx)
    assert result.text.splitlines() == ["ext/"]
    with pytest.raises(ToolError, match="outside the workspace"):
        await ListFilesTool().run({"path": "ext"}, ctx)


async def test_list_is_capped(ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "LIST_MAX_ENTRIES", 5)
    for i in range(10):
        (workspace / f"f{i}.tf").write_text("")
    result = await ListFilesTool().run({}, ctx)
    assert result.text.splitlines()[:5] == [f"f{i}.tf" for i in range(5)]
    assert "stopped at 5 entries" in result.text


def test_list_titles() -> None:
    assert ListFilesTool().title({"path": "modules"}) == "List modules/"
    assert ListFilesTool().title({}) == "List files"


# ---- write_file


async def test_write_creates_parents_and_reports_a_new_file(ctx: ToolContext, workspace: Path) -> None:
    result = await WriteFileTool().run({"path": "modules/vpc/main.tf", "content": "a\nb\n"}, ctx)
    target = workspace / "modules" / "vpc" / "main.tf"
    assert target.read_text() == "a\nb\n"
    assert result.diff is not None
    assert (result.diff.path, result.diff.old_text, result.diff.new_text) == (str(target.resolve()), None, "a\nb\n")
    assert "Created modules/vpc/main.tf (2 lines)" in result.text


async def test_write_overwrite_keeps_old_text_in_the_diff(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "main.tf").write_text("old\n")
    result = await WriteFileTool().run({"path": "main.tf", "content": "new\n"}, ctx)
    assert result.diff is not None and result.diff.old_text == "old\n"
    assert (workspace / "main.tf").read_text() == "new\n"
    assert WriteFileTool().title({"path": "main.tf"}) == "Write main.tf"


async def test_write_refuses_escapes_and_leaves_outside_untouched(
    ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "dir").symlink_to(outside)
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "link.txt", "dir/secret.txt", "dir/new.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            await WriteFileTool().run({"path": path, "content": "pwned"}, ctx)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


# ---- edit_file


async def test_edit_replaces_a_unique_match(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "variables.tf").write_text('variable "region" {\n  default = "cn-hangzhou"\n}\n')
    args = {"path": "variables.tf", "old_string": '"cn-hangzhou"', "new_string": '"cn-beijing"'}
    result = await EditFileTool().run(args, ctx)
    assert (workspace / "variables.tf").read_text() == 'variable "region" {\n  default = "cn-beijing"\n}\n'
    assert '-  default = "cn-hangzhou"' in result.text and '+  default = "cn-beijing"' in result.text
    assert result.diff is not None and "cn-hangzhou" in (result.diff.old_text or "")
    assert "cn-beijing" in result.diff.new_text
    assert EditFileTool().title(args) == "Edit variables.tf"


async def test_edit_with_no_match(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.tf").write_text("abc\n")
    with pytest.raises(ToolError, match="not found"):
        await EditFileTool().run({"path": "a.tf", "old_string": "xyz", "new_string": "q"}, ctx)
    assert (workspace / "a.tf").read_text() == "abc\n"


async def test_edit_with_several_matches_says_how_many(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.tf").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError, match="matches 3 times"):
        await EditFileTool().run({"path": "a.tf", "old_string": "x = 1", "new_string": "x = 2"}, ctx)
    assert (workspace / "a.tf").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_replace_all(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.tf").write_text("x = 1\ny = 0\nx = 1\n")
    args = {"path": "a.tf", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}
    result = await EditFileTool().run(args, ctx)
    assert (workspace / "a.tf").read_text() == "x = 2\ny = 0\nx = 2\n"
    assert "2 replacements" in result.text


async def test_edit_refuses_empty_or_identical_strings(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.tf").write_text("abc\n")
    with pytest.raises(ToolError, match="empty"):
        await EditFileTool().run({"path": "a.tf", "old_string": "", "new_string": "q"}, ctx)
    with pytest.raises(ToolError, match="same"):
        await EditFileTool().run({"path": "a.tf", "old_string": "abc", "new_string": "abc"}, ctx)


async def test_edit_refuses_a_symlink_out(ctx: ToolContext, workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await EditFileTool().run({"path": "link.txt", "old_string": "top", "new_string": "no"}, ctx)
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_huge_files_are_not_loaded(ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confined_io, "MAX_TEXT_FILE_BYTES", 1000)
    (workspace / "huge.log").write_text("x" * 2000)
    with pytest.raises(ToolError, match="grep"):
        await ReadFileTool().run({"path": "huge.log"}, ctx)
    with pytest.raises(ToolError, match="grep"):
        await EditFileTool().run({"path": "huge.log", "old_string": "x", "new_string": "y"}, ctx)
