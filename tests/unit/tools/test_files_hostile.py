"""What a hostile workspace holds: FIFOs, hard links to the outside, symlink loops, directories swapped
for symlinks mid-call; and a write killed half-way. The file tools refuse or skip, never hang or leak."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.files import EditFileTool, ListFilesTool, ReadFileTool, WriteFileTool
from iac_code.tools.search import GlobTool, GrepTool

# ---- FIFOs, sockets: refused by read/edit/write, skipped by list/glob/grep (item 2)


@pytest.fixture
def fifo(workspace: Path) -> Path:
    path = workspace / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.timeout(20)
async def test_fifo_is_refused_by_read_edit_and_write_without_blocking(ctx: ToolContext, fifo: Path) -> None:
    calls = [
        ReadFileTool().run({"path": "pipe"}, ctx),
        EditFileTool().run({"path": "pipe", "old_string": "a", "new_string": "b"}, ctx),
        WriteFileTool().run({"path": "pipe", "content": "x"}, ctx),
    ]
    for call in calls:
        with pytest.raises(ToolError, match="not a regular file"):
            await asyncio.wait_for(call, 5)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # a write did not replace it either


@pytest.mark.timeout(20)
async def test_list_glob_and_grep_skip_a_fifo(ctx: ToolContext, workspace: Path, fifo: Path) -> None:
    (workspace / "main.tf").write_text("needle\n")
    listed = await asyncio.wait_for(ListFilesTool().run({}, ctx), 5)
    assert listed.text == "main.tf"
    assert (await asyncio.wait_for(GlobTool().run({"pattern": "*"}, ctx), 5)).text == "main.tf"
    assert (await asyncio.wait_for(GrepTool().run({"pattern": "needle"}, ctx), 5)).text == "main.tf:1:needle"
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(GrepTool().run({"pattern": "x", "path": "pipe"}, ctx), 5)


# ---- hard links (item 7)


async def test_hard_links_are_refused(ctx: ToolContext, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    os.link(outside, workspace / "alias.txt")
    for call in (
        ReadFileTool().run({"path": "alias.txt"}, ctx),
        WriteFileTool().run({"path": "alias.txt", "content": "pwned\n"}, ctx),
        EditFileTool().run({"path": "alias.txt", "old_string": "secret", "new_string": "pwned"}, ctx),
    ):
        with pytest.raises(ToolError, match="hard links"):
            await call
    assert outside.read_text() == "secret\n"


# ---- symlink loops (item 10)


async def test_a_symlink_loop_is_skipped_by_list_files(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    (workspace / "main.tf").write_text("x")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "self").symlink_to("self")
    (workspace / "sub" / "vars.tf").write_text("x")
    result = await ListFilesTool().run({"depth": 2}, ctx)
    assert result.text.splitlines() == ["main.tf", "sub/", "sub/vars.tf"]
    assert (await ListFilesTool().run({"path": "sub"}, ctx)).text == "vars.tf"


# ---- a directory swapped for a symlink while the tool runs (item 5)


def _swap_forever(directory: Path, outside: Path, stop: threading.Event) -> None:
    parked = directory.with_name(directory.name + ".parked")
    while not stop.is_set():
        try:
            os.rename(directory, parked)
            os.symlink(outside, directory)
            os.unlink(directory)
            os.rename(parked, directory)
        except OSError:  # write_file made the directory anew in the gap: put the real one back
            if directory.is_symlink():
                directory.unlink()
            elif directory.is_dir():
                shutil.rmtree(directory, ignore_errors=True)
            if parked.exists():
                with contextlib.suppress(OSError):
                    os.rename(parked, directory)


@pytest.mark.timeout(60)
async def test_swapping_a_directory_for_a_symlink_never_reaches_the_outside(
    ctx: ToolContext, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE SECRET\n")
    (workspace / "dd").mkdir()
    (workspace / "dd" / "secret.txt").write_text("inside\n")
    stop = threading.Event()
    swapper = threading.Thread(target=_swap_forever, args=(workspace / "dd", outside, stop))
    swapper.start()
    leaked: list[str] = []
    try:
        for attempt in range(1000):
            calls = [ReadFileTool().run({"path": "dd/secret.txt"}, ctx)]
            if attempt % 5 == 0:  # writes fsync: fewer of them keep the test quick
                calls.append(WriteFileTool().run({"path": f"dd/new{attempt}.txt", "content": "written\n"}, ctx))
                edit = {"path": "dd/secret.txt", "old_string": "inside", "new_string": "inside"}
                calls.append(EditFileTool().run(edit, ctx))
            for call in calls:
                try:
                    text = (await call).text
                except ToolError as exc:
                    text = str(exc)
                if "OUTSIDE" in text:
                    leaked.append(text)
    finally:
        stop.set()
        swapper.join()
    assert not leaked, leaked[:3]
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing was written out there
    assert (outside / "secret.txt").read_text() == "OUTSIDE SECRET\n"


# ---- atomic writes (item 14)


async def test_write_keeps_the_mode_of_an_existing_file(ctx: ToolContext, workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    await WriteFileTool().run({"path": "run.sh", "content": "echo new\n"}, ctx)
    assert stat.S_IMODE(script.stat().st_mode) == 0o750 and script.read_text() == "echo new\n"
    assert [p.name for p in workspace.iterdir()] == ["run.sh"]  # no temporary file left behind


_WRITER = """
import asyncio, sys
from pathlib import Path
from iac_code.tools.base import ToolContext
from iac_code.tools.files import WriteFileTool
content = "new line of the big file\\n" * (30 * 1024 * 1024 // 25)
print("ready", flush=True)
asyncio.run(WriteFileTool().run({"path": "big.txt", "content": content}, ToolContext(workspace=Path(sys.argv[1]))))
"""


@pytest.mark.timeout(90)
def test_kill_9_during_a_30_mb_write_leaves_the_old_file_or_the_new_one(workspace: Path) -> None:
    target = workspace / "big.txt"
    old = "old content\n" * 1000
    new_size = len("new line of the big file\n") * (30 * 1024 * 1024 // 25)
    for delay in (0.02, 0.05, 0.08, 0.12, 0.2):
        target.write_text(old)
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(workspace)], stdout=subprocess.PIPE)
        assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        size = target.stat().st_size
        assert size in (len(old), new_size), f"a torn file of {size} bytes after {delay}s"
        for leftover in workspace.glob(".big.txt.*.tmp"):
            leftover.unlink()  # what a killed write leaves is a hidden temporary file, never the target
