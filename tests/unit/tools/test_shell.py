import asyncio
import tempfile
import uuid
from pathlib import Path

import pytest
from tests.processes import MARK, eventually, marked_processes

from iac_code.guard.namespace import NamespaceSupport, probe_namespaces
from iac_code.guard.shims import Guard
from iac_code.tools import shell
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.local_shell import HeadTailBuffer
from iac_code.tools.shell import BashTool


def _pid_namespaces_here() -> bool:
    with tempfile.TemporaryDirectory() as directory:
        return probe_namespaces(Path(directory)).own_pids


PID_NAMESPACES = _pid_namespaces_here()


@pytest.fixture
def marker() -> str:
    """What the processes a test's command starts carry in their environment (tests/processes.py)."""
    return uuid.uuid4().hex


async def marked_running(marker: str, count: int = 1) -> None:
    started = await eventually(5.0, lambda: len(marked_processes(marker)) >= count)
    assert started, f"the command's processes marked {marker} never started"


async def marked_gone_within(marker: str, seconds: float) -> bool:
    return await eventually(seconds, lambda: not marked_processes(marker))


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = await BashTool().run({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert result.text == "out\nerr\nExit code: 3"
    assert result.is_error
    ok = await BashTool().run({"command": "true"}, ctx)
    assert ok.text == "(no output)\nExit code: 0" and not ok.is_error


async def test_runs_in_the_workspace_without_stdin(ctx: ToolContext, workspace: Path) -> None:
    result = await BashTool().run({"command": "pwd; cat; echo done"}, ctx)
    assert result.text.splitlines() == [str(workspace), "done", "Exit code: 0"]


async def test_model_keys_and_cloud_credentials_are_not_passed_to_commands(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("ALICLOUD_ACCESS_KEY_SECRET", "cloud-secret")
    monkeypatch.setenv("KUBECONFIG", "/somewhere/config")
    monkeypatch.setenv("LANG", "C.UTF-8")
    command = 'echo "${OPENAI_API_KEY:-unset} ${ALICLOUD_ACCESS_KEY_SECRET:-unset} ${KUBECONFIG:-unset} $LANG"'
    result = await BashTool().run({"command": command}, ctx)
    assert result.text.splitlines()[0] == "unset unset unset C.UTF-8"


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext, marker: str) -> None:
    command = f"echo started; {MARK}={marker} sleep 30 & wait"
    result = await BashTool().run({"command": command, "timeout": 1}, ctx)
    assert result.is_error
    assert "timed out after 1 s" in result.text and "started" in result.text
    assert await marked_gone_within(marker, 1.0)


async def test_cancellation_kills_the_process_group(ctx: ToolContext, marker: str) -> None:
    command = f"exec env {MARK}={marker} bash -c 'sleep 30 & wait'"  # the shell and its child, both marked
    task = asyncio.create_task(BashTool().run({"command": command}, ctx))
    await marked_running(marker, count=2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await marked_gone_within(marker, 1.0)


async def test_sigterm_ignoring_command_is_killed(ctx: ToolContext, marker: str) -> None:
    command = f"trap '' TERM; {MARK}={marker} sleep 30 & wait"
    result = await BashTool().run({"command": command, "timeout": 1}, ctx)
    assert "timed out" in result.text
    assert await marked_gone_within(marker, 1.0)


async def test_background_job_does_not_hold_the_call_open(ctx: ToolContext, marker: str) -> None:
    command = f"({MARK}={marker} sleep 30; echo late) & echo started"
    result = await asyncio.wait_for(BashTool().run({"command": command}, ctx), 10)
    assert result.text.splitlines()[0] == "started" and "late" not in result.text
    assert await marked_gone_within(marker, 1.0)


async def test_huge_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    command = "echo FIRST-LINE; yes 0123456789 | head -c 5000000; echo LAST-LINE"
    result = await BashTool().run({"command": command}, ctx)
    assert result.text.startswith("FIRST-LINE\n")
    assert result.text.endswith("LAST-LINE\nExit code: 0")
    assert "bytes of output cut" in result.text
    assert len(result.text) < 31_000


def test_head_tail_buffer_small_and_large() -> None:
    small = HeadTailBuffer(100)
    small.feed(b"hello ")
    small.feed(b"world")
    assert small.text() == "hello world"
    large = HeadTailBuffer(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        large.feed(chunk)
    assert large.text() == "abcde\n\n[... 16 bytes of output cut ...]\n\nvwxyz"


async def test_bad_arguments(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="command"):
        await BashTool().run({"command": "  "}, ctx)
    with pytest.raises(ToolError, match="timeout"):
        await BashTool().run({"command": "true", "timeout": -1}, ctx)


def test_titles() -> None:
    assert BashTool().title({"command": "terraform validate"}) == "Run terraform validate"
    assert BashTool().title({"command": "x", "description": "Validate config"}) == "Validate config"
    assert len(BashTool().title({"command": "echo " + "a" * 200})) <= 64


@pytest.mark.parametrize(
    "start",
    [
        "{mark} nohup sleep 30 >/dev/null 2>&1 &",  # same group, but not holding the output pipe
        "{mark} setsid sleep 30 >/dev/null 2>&1 &",  # its own session: out of reach of killpg
        "({mark} setsid sleep 30 >/dev/null 2>&1 &) ",  # and orphaned at once (double fork)
        "setsid sh -c '{mark} sleep 30 & wait' >/dev/null 2>&1 &",  # a grandchild in another session
        pytest.param(  # and the command's parent killed: only a PID namespace holds against that
            "{mark} setsid -f sleep 30 >/dev/null 2>&1; kill -9 $PPID",
            marks=pytest.mark.skipif(not PID_NAMESPACES, reason="no PID namespaces here"),
        ),
    ],
)
async def test_nothing_a_call_started_outlives_it(ctx: ToolContext, marker: str, start: str) -> None:
    line = start.format(mark=f"{MARK}={marker}")
    result = await asyncio.wait_for(BashTool().run({"command": f"{line}\nsleep 0.2; echo started"}, ctx), 10)
    assert "started" in result.text.splitlines()
    assert await marked_gone_within(marker, 1.0)


async def test_cancellation_ends_processes_that_left_the_session(ctx: ToolContext, marker: str) -> None:
    command = f"{MARK}={marker} setsid sleep 30 >/dev/null 2>&1 & sleep 30"
    task = asyncio.create_task(BashTool().run({"command": command}, ctx))
    await marked_running(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await marked_gone_within(marker, 1.5)


@pytest.mark.parametrize(("signal_number", "shown"), [(40, "signal 40"), (9, "signal 9 (SIGKILL)")])
async def test_a_command_killed_by_a_signal_reports_its_number(
    ctx: ToolContext, signal_number: int, shown: str
) -> None:
    # 40 is a real-time signal with no name in Python's Signals enum: it used to raise ValueError.
    result = await BashTool().run({"command": f"kill -{signal_number} $$"}, ctx)
    assert result.is_error
    assert result.text == f"(no output)\nKilled by {shown}"


@pytest.mark.parametrize(
    ("args", "access"),
    [
        ({"command": "terraform plan -out tfplan && terraform show tfplan"}, "execute"),
        ({"command": "cd envs/prod && /usr/local/bin/terraform apply tfplan"}, "infra_plan"),  # asked with its plan
        ({"command": "terraform apply && kubectl delete pod web-0"}, "infra_plan"),  # asked on the line, with a note
        ({"command": "kubectl delete pod web-0 && terraform plan"}, "infra_change"),
        ({"command": "bash -lc 'kubectl -n apps delete pod web-0'"}, "infra_change"),
        ({"command": "echo $(("}, "infra_change"),  # a line that cannot be parsed counts as changing
        ({}, "execute"),  # nothing to run: run() refuses it
        ({"command": 42}, "execute"),
    ],
)
def test_access_names_infrastructure_changes(args: dict, access: str) -> None:
    assert BashTool().access(args) == access


@pytest.mark.parametrize(("namespaces", "credential_file", "access"), [
    (False, True, "unguarded_execute"),  # the files could be read: never unasked
    (True, True, "execute"),  # hidden in each command's namespace
    (False, False, "execute"),  # nothing to hide: the environment part holds
])  # fmt: skip
def test_a_command_that_could_read_the_credential_files_is_judged_unguarded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, namespaces: bool, credential_file: bool, access: str
) -> None:
    if credential_file:
        (tmp_path / ".aws").mkdir()
        (tmp_path / ".aws" / "credentials").write_text("[default]\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    guard = Guard(NamespaceSupport(namespaces, "" if namespaces else "not here"))
    try:
        monkeypatch.setattr(shell, "process_guard", lambda: guard)
        assert BashTool().access({"command": "ls"}) == access
        assert BashTool().access({"command": "kubectl delete pod web-0"}) == "infra_change"
    finally:
        guard.close()
