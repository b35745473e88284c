"""ClientIO with a fake editor: unsaved buffers, writes through the client, the terminal lifecycle
(create, live id, wait, kill on timeout and cancel, release always), and the fallback to the local disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities

from iac_code.tools.backends import LocalIO
from iac_code.tools.base import ToolError
from iac_code.tools.client_io import ClientIO, terminal_content, workspace_io
from iac_code.tools.shell import bash_result, command_environment

from .fake_editor import FakeEditor

EVERYTHING = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)
ENV = {"PATH": "/usr/bin:/bin", "AWS_PROFILE": "dev", "OPENAI_API_KEY": "sk-secret", "IAC_CODE_API_KEY": "sk-2"}


def client(workspace: Path, editor: FakeEditor, capabilities: ClientCapabilities = EVERYTHING) -> ClientIO:
    return ClientIO(workspace, "sess-1", editor, capabilities)


# -- files ------------------------------------------------------------------------------------


async def test_reads_see_the_unsaved_buffer_and_writes_go_through_the_editor(workspace: Path) -> None:
    (workspace / "main.tf").write_text("on disk\n")
    editor = FakeEditor(buffers={workspace / "main.tf": "unsaved edit\n"})
    io = client(workspace, editor)
    assert await io.read_text("main.tf") == "unsaved edit\n"
    await io.write_text("modules/vpc/main.tf", 'module "vpc" {}\n')
    assert editor.calls == [
        ("fs/read_text_file", {"sessionId": "sess-1", "path": str(workspace / "main.tf")}),
        (
            "fs/write_text_file",
            {"sessionId": "sess-1", "path": str(workspace / "modules/vpc/main.tf"), "content": 'module "vpc" {}\n'},
        ),
    ]
    assert (workspace / "main.tf").read_text() == "on disk\n" and not (workspace / "modules").exists()


async def test_paths_outside_the_workspace_are_refused_before_the_editor_is_asked(workspace: Path, outside: Path):
    editor = FakeEditor()
    io = client(workspace, editor)
    with pytest.raises(ToolError, match="outside the workspace"):
        await io.read_text(str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        await io.write_text("../outside/new.txt", "x")
    with pytest.raises(ToolError, match="outside the workspace"):
        await io.run("ls", cwd=outside, env=ENV, timeout=5)
    assert editor.calls == []


async def test_an_editor_error_is_a_tool_error_the_model_sees(workspace: Path) -> None:
    with pytest.raises(ToolError, match="the editor refused fs/read_text_file"):
        await client(workspace, FakeEditor()).read_text("missing.tf")


async def test_method_not_found_falls_back_to_the_disk_for_the_rest_of_the_session(workspace: Path) -> None:
    (workspace / "a.tf").write_text("from disk")
    editor = FakeEditor(missing=("fs/read_text_file", "fs/write_text_file"))
    io = client(workspace, editor)
    assert await io.read_text("a.tf") == "from disk"
    assert await io.read_text("a.tf") == "from disk"
    await io.write_text("b.tf", "written locally")
    await io.write_text("b.tf", "again")
    assert (workspace / "b.tf").read_text() == "again"
    assert editor.methods == ["fs/read_text_file", "fs/write_text_file"], "each asked once, then remembered"
    assert (io.reads, io.writes, io.terminals) == (False, False, True)


def test_the_backend_follows_the_advertised_capabilities(workspace: Path) -> None:
    editor = FakeEditor()
    assert isinstance(workspace_io(workspace, "s", editor, None), LocalIO)
    assert isinstance(workspace_io(workspace, "s", editor, ClientCapabilities()), LocalIO)
    terminal_only = workspace_io(workspace, "s", editor, ClientCapabilities(terminal=True))
    assert isinstance(terminal_only, ClientIO)
    assert (terminal_only.reads, terminal_only.writes, terminal_only.terminals) == (False, False, True)


async def test_a_client_without_fs_capabilities_reads_the_disk(workspace: Path) -> None:
    (workspace / "a.tf").write_text("disk")
    editor = FakeEditor(buffers={workspace / "a.tf": "buffer"})
    io = client(workspace, editor, ClientCapabilities(terminal=True))
    assert await io.read_text("a.tf") == "disk" and editor.calls == []


# -- terminals --------------------------------------------------------------------------------


async def test_the_whole_terminal_lifecycle(workspace: Path) -> None:
    editor = FakeEditor(exit_code=2, outputs=[{"output": "Error: invalid CIDR\n", "truncated": False}])
    shown: list[tuple[str, list[str]]] = []

    async def on_terminal(terminal_id: str) -> None:
        shown.append((terminal_id, list(editor.methods)))

    run = await client(workspace, editor).run(
        "terraform validate", cwd=workspace, env=ENV, timeout=30, output_limit=1000, on_terminal=on_terminal
    )
    assert shown == [("term-1", ["terminal/create"])], "the id is handed over as soon as the terminal exists"
    method, create = editor.calls[0]
    assert method == "terminal/create"
    assert create == {
        "sessionId": "sess-1",
        "command": "bash",
        "args": ["-c", "terraform validate"],
        "cwd": str(workspace),
        "env": [{"name": "PATH", "value": "/usr/bin:/bin"}, {"name": "AWS_PROFILE", "value": "dev"}],
        "outputByteLimit": 1000,
    }
    assert editor.methods[-2:] == ["terminal/output", "terminal/release"]
    assert "terminal/wait_for_exit" in editor.methods and "terminal/kill" not in editor.methods
    assert all(params["terminalId"] == "term-1" for _, params in editor.calls[1:])
    assert (run.output, run.exit_code, run.signal, run.timed_out, run.terminal_id) == (
        "Error: invalid CIDR\n",
        2,
        None,
        False,
        "term-1",
    )
    result = bash_result(run, 30)
    assert result.text == "Error: invalid CIDR\nExit code: 2" and result.is_error
    assert terminal_content(run.terminal_id).model_dump(by_alias=True, exclude_none=True) == {
        "type": "terminal",
        "terminalId": "term-1",
    }


async def test_a_timeout_kills_then_reads_the_output_then_releases(workspace: Path) -> None:
    editor = FakeEditor(exit_after=None, outputs=[{"output": "still planning...", "truncated": False}])
    run = await client(workspace, editor).run("sleep 100", cwd=workspace, env=ENV, timeout=0.2)
    assert run.timed_out and run.terminal_id == "term-1"
    lifecycle = [m for m in editor.methods if m != "terminal/output"]
    assert lifecycle == ["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/release"]
    assert editor.methods[-2:] == ["terminal/output", "terminal/release"]
    assert bash_result(run, 0.2).text == "still planning...\nCommand timed out after 0.2 s and was killed."


async def test_cancel_kills_and_releases_the_terminal_promptly(workspace: Path) -> None:
    editor = FakeEditor(exit_after=None)
    running = asyncio.ensure_future(client(workspace, editor).run("terraform plan", cwd=workspace, env=ENV, timeout=60))
    while "terminal/wait_for_exit" not in editor.methods:
        await asyncio.sleep(0.01)
    started = asyncio.get_running_loop().time()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert asyncio.get_running_loop().time() - started < 1.0
    assert [m for m in editor.methods if m in ("terminal/kill", "terminal/release")] == [
        "terminal/kill",
        "terminal/release",
    ]


async def test_release_follows_even_when_the_editor_fails_mid_way(workspace: Path) -> None:
    editor = FakeEditor(failing=("terminal/output",))
    with pytest.raises(ToolError, match="terminal/output"):
        await client(workspace, editor).run("ls", cwd=workspace, env=ENV, timeout=5)
    assert editor.methods[-2:] == ["terminal/kill", "terminal/release"]


async def test_a_release_that_never_answers_does_not_hold_the_tool(workspace: Path) -> None:
    editor = FakeEditor()
    hang = asyncio.Event()

    async def slow_release(method: str, params: dict) -> object:
        if method == "terminal/release":
            await hang.wait()
        return await editor(method, params)

    io = ClientIO(workspace, "sess-1", slow_release, EVERYTHING)
    run = await asyncio.wait_for(io.run("true", cwd=workspace, env=ENV, timeout=5), 2)
    assert run.exit_code == 0
    hang.set()
    await asyncio.sleep(0.01)  # let the release finish in the background


async def test_long_output_keeps_its_head_and_tail(workspace: Path) -> None:
    head = "H" * 40
    outputs = [
        {"output": head[:10], "truncated": False},  # polled while it runs: the start is caught
        {"output": head, "truncated": False},
        {"output": "T" * 100, "truncated": True},  # at the end the editor kept only the tail
    ]
    editor = FakeEditor(exit_after=0.3, outputs=outputs)
    run = await client(workspace, editor).run("make plan", cwd=workspace, env=ENV, timeout=5, output_limit=100)
    assert run.output == f"{head}\n\n[... output cut ...]\n\n{'T' * 60}"


async def test_a_client_without_terminals_runs_locally_and_is_not_asked_again(workspace: Path) -> None:
    editor = FakeEditor(missing=("terminal/create",))
    io = client(workspace, editor)
    env = command_environment()
    first = await io.run("echo local; exit 3", cwd=workspace, env=env, timeout=5)
    second = await io.run("pwd", cwd=".", env=env, timeout=5)
    assert (first.output, first.exit_code, first.terminal_id) == ("local\n", 3, None)
    assert second.output.strip() == str(workspace.resolve())
    assert editor.methods == ["terminal/create"] and io.terminals is False


async def test_the_local_backend_runs_and_times_out(workspace: Path) -> None:
    io = LocalIO(workspace)
    env = command_environment()
    assert (await io.run("printf hi", cwd=workspace, env=env, timeout=5)).output == "hi"
    slow = await io.run("sleep 5", cwd=workspace, env=env, timeout=0.2)
    assert slow.timed_out and slow.exit_code is None
    await io.write_text("x/y.tf", "z")
    assert await io.read_text("x/y.tf") == "z"
