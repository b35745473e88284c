"""ClientIO with a fake editor: unsaved buffers, writes through the client, the terminal lifecycle
(create, live id, wait, kill on timeout and cancel, release always), and the fallback to the local disk."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp.schema import ClientCapabilities, FileSystemCapabilities

from iac_code.acp import client_io
from iac_code.acp.client_io import ClientIO, workspace_io
from iac_code.system.processes import command_environment, contained_in_terminal
from iac_code.tools.backends import LocalIO
from iac_code.tools.base import Terminal, ToolContext, ToolError
from iac_code.tools.shell import BashTool, bash_result

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
    assert await io.write_text("modules/vpc/main.tf", 'module "vpc" {}\n') is None, "a new file"
    new_file = str(workspace / "modules/vpc/main.tf")
    assert editor.calls == [
        ("fs/read_text_file", {"sessionId": "sess-1", "path": str(workspace / "main.tf")}),
        ("fs/read_text_file", {"sessionId": "sess-1", "path": new_file}),  # what it held, for the diff
        ("fs/write_text_file", {"sessionId": "sess-1", "path": new_file, "content": 'module "vpc" {}\n'}),
    ]
    assert await io.write_text("main.tf", "saved by the agent\n") == "unsaved edit\n", "the diff's old side"
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


def test_fs_capabilities_the_sdk_could_not_read_are_none(workspace: Path) -> None:
    # The SDK replaces an `fs` it rejects with its default as a plain dict (found by tests/fuzz).
    capabilities = ClientCapabilities.model_validate({"fs": 5, "terminal": True})
    io = workspace_io(workspace, "s", FakeEditor(), capabilities)
    assert isinstance(io, ClientIO) and (io.reads, io.writes, io.terminals) == (False, False, True)


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
        "args": contained_in_terminal("terraform validate"),
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


async def test_bash_shows_the_terminal_on_its_call_while_it_runs_and_after(workspace: Path) -> None:
    editor = FakeEditor(outputs=[{"output": "Success!\n", "truncated": False}])
    progress: list[tuple[Terminal, list[str]]] = []

    async def report(terminal: Terminal) -> None:
        progress.append((terminal, list(editor.methods)))

    ctx = ToolContext(workspace, io=client(workspace, editor), progress=report)
    result = await BashTool().run({"command": "terraform validate"}, ctx)
    assert progress == [(Terminal("term-1"), ["terminal/create"])], "shown before the command ends"
    assert result.terminal_id == "term-1" and result.text == "Success!\nExit code: 0" and not result.is_error


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


@pytest.fixture
def patience(monkeypatch: pytest.MonkeyPatch) -> float:
    """A short ANSWER_SECONDS, for the tests of an editor that does not answer."""
    monkeypatch.setattr(client_io, "ANSWER_SECONDS", 0.2)
    return 0.2


async def test_a_release_that_never_answers_fails_the_call_after_the_bound(workspace: Path, patience: float) -> None:
    editor = FakeEditor(outputs=[{"output": "validated\n", "truncated": False}], silent=("terminal/release",))
    run = await asyncio.wait_for(client(workspace, editor).run("true", cwd=workspace, env=ENV, timeout=5), 2)
    assert run.exit_code == 0 and run.problem is not None
    result = bash_result(run, 5)
    assert result.is_error and result.text == (
        "validated\nExit code: 0\nThe editor did not release the terminal within 0.2 s (no answer to terminal/release)."
    )


async def test_a_kill_that_never_answers_ends_the_call_with_what_was_caught(workspace: Path, patience: float) -> None:
    editor = FakeEditor(
        exit_after=None, outputs=[{"output": "planning...\n", "truncated": False}], silent=("terminal/kill",)
    )
    started = asyncio.get_running_loop().time()
    run = await client(workspace, editor).run("terraform plan", cwd=workspace, env=ENV, timeout=0.3)
    took = asyncio.get_running_loop().time() - started
    assert 0.3 + patience <= took < 0.3 + patience + 1.5, "the kill got its time, and no more than a cleanup's"
    assert run.timed_out and run.exit_code is None
    assert [m for m in editor.methods if m != "terminal/output"][-2:] == ["terminal/kill", "terminal/release"]
    result = bash_result(run, 0.3)
    assert result.is_error and result.text == (
        "planning...\n\nCommand timed out after 0.3 s.\nThe editor did not stop the terminal within 0.2 s "
        "(no answer to terminal/kill). The command may still be running there."
    )


async def test_an_output_that_never_comes_ends_the_call_with_how_the_command_ended(
    workspace: Path, patience: float
) -> None:
    editor = FakeEditor(exit_code=1, silent=("terminal/output",))
    run = await asyncio.wait_for(client(workspace, editor).run("false", cwd=workspace, env=ENV, timeout=5), 2)
    assert (run.output, run.exit_code, run.timed_out) == ("", 1, False)
    assert bash_result(run, 5).text == (
        "(no output)\nExit code: 1\n"
        "The editor did not send the terminal's output within 0.2 s (no answer to terminal/output)."
    )
    assert editor.methods[-1] == "terminal/release"


async def test_an_output_beyond_the_limit_is_cut_even_when_the_editor_ignores_the_limit(workspace: Path) -> None:
    huge = "".join(f"{n}\n" for n in range(200_000))  # 1.3 MB, all of it kept: not "truncated"
    editor = FakeEditor(outputs=[{"output": huge, "truncated": False}])
    run = await client(workspace, editor).run("seq", cwd=workspace, env=ENV, timeout=5, output_limit=1000)
    head, tail = run.output.split("\n\n[... ")
    assert head == huge[:500] and tail.endswith(huge[-500:])
    assert tail.removesuffix(huge[-500:]) == f"{len(huge) - 1000:,} characters cut ...]\n\n"


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


async def test_a_cancel_at_any_moment_of_the_output_polling_ends_the_call(workspace: Path, monkeypatch) -> None:
    """Python 3.11's asyncio.wait_for loses a cancel that arrives as the awaited answer does; the head's
    poller, cancelled then, polled on until the command ended (a cancelled turn held for a minute)."""
    monkeypatch.setattr(client_io, "HEAD_POLL_FIRST", 0)  # poll on every tick: every moment gets a cancel
    monkeypatch.setattr(client_io, "HEAD_POLL_MAX", 0)
    for ticks in range(40):
        editor = FakeEditor(exit_after=None)
        running = asyncio.ensure_future(client(workspace, editor).run("sleep 60", cwd=workspace, env=ENV, timeout=60))
        while "terminal/wait_for_exit" not in editor.methods:
            await asyncio.sleep(0)
        for _ in range(ticks):
            await asyncio.sleep(0)
        running.cancel()
        await asyncio.wait([running], timeout=2)
        assert running.cancelled(), f"a cancel {ticks} ticks into the polling did not end the call"
        assert editor.methods[-2:] == ["terminal/kill", "terminal/release"], "and nothing polled after it"
