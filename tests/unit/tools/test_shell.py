import asyncio
from pathlib import Path

import pytest
from tests.processes import process_alive

from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.shell import BashTool, HeadTailBuffer


async def wait_for_file(path: Path) -> str:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def gone_within(pid: int, seconds: float) -> bool:
    for _ in range(int(seconds / 0.02)):
        if not process_alive(pid):
            return True
        await asyncio.sleep(0.02)
    return not process_alive(pid)


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = await BashTool().run({"command": "echo out; echo err >&2; exit 3"}, ctx)
    assert result.text == "out\nerr\nExit code: 3"
    assert result.is_error
    ok = await BashTool().run({"command": "true"}, ctx)
    assert ok.text == "(no output)\nExit code: 0" and not ok.is_error


async def test_runs_in_the_workspace_without_stdin(ctx: ToolContext, workspace: Path) -> None:
    result = await BashTool().run({"command": "pwd; cat; echo done"}, ctx)
    assert result.text.splitlines() == [str(workspace), "done", "Exit code: 0"]


async def test_model_keys_are_not_passed_to_commands(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("ALICLOUD_REGION", "cn-hangzhou")
    result = await BashTool().run({"command": 'echo "${OPENAI_API_KEY:-unset} $ALICLOUD_REGION"'}, ctx)
    assert result.text.splitlines()[0] == "unset cn-hangzhou"


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext, workspace: Path) -> None:
    command = "echo started; sleep 30 & echo $! > child.pid; wait"
    result = await BashTool().run({"command": command, "timeout": 1}, ctx)
    assert result.is_error
    assert "timed out after 1 s" in result.text and "started" in result.text
    child = int((workspace / "child.pid").read_text())
    assert await gone_within(child, 1.0)


async def test_cancellation_kills_the_process_group(ctx: ToolContext, workspace: Path) -> None:
    command = "sleep 30 & echo $! > child.pid; echo $$ > shell.pid; wait"
    task = asyncio.create_task(BashTool().run({"command": command}, ctx))
    child = int(await wait_for_file(workspace / "child.pid"))
    shell = int(await wait_for_file(workspace / "shell.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_within(child, 1.0)
    assert await gone_within(shell, 1.0)


async def test_sigterm_ignoring_command_is_killed(ctx: ToolContext, workspace: Path) -> None:
    command = "trap '' TERM; sleep 30 & echo $! > child.pid; wait"
    result = await BashTool().run({"command": command, "timeout": 1}, ctx)
    assert "timed out" in result.text
    assert await gone_within(int((workspace / "child.pid").read_text()), 1.0)


async def test_background_job_does_not_hold_the_call_open(ctx: ToolContext, workspace: Path) -> None:
    command = "(sleep 30; echo late) & echo $! > bg.pid; echo started"
    result = await asyncio.wait_for(BashTool().run({"command": command}, ctx), 10)
    assert result.text.splitlines()[0] == "started" and "late" not in result.text
    assert await gone_within(int((workspace / "bg.pid").read_text()), 1.0)


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
        "nohup sleep 30 >/dev/null 2>&1 & echo $! > left.pid",  # same group, but not holding the output pipe
        "setsid sleep 30 >/dev/null 2>&1 & echo $! > left.pid",  # its own session: out of reach of killpg
        "(setsid sleep 30 >/dev/null 2>&1 & echo $! > left.pid) ",  # and orphaned at once (double fork)
        "setsid sh -c 'sleep 30 & echo $! > left.pid; wait' >/dev/null 2>&1 &",  # a grandchild in another session
    ],
)
async def test_nothing_a_call_started_outlives_it(ctx: ToolContext, workspace: Path, start: str) -> None:
    result = await asyncio.wait_for(BashTool().run({"command": f"{start}\nsleep 0.2; echo started"}, ctx), 10)
    assert result.text.splitlines() == ["started", "Exit code: 0"]
    assert await gone_within(int((workspace / "left.pid").read_text()), 1.0)


async def test_cancellation_ends_processes_that_left_the_session(ctx: ToolContext, workspace: Path) -> None:
    command = "setsid sleep 30 >/dev/null 2>&1 & echo $! > left.pid; sleep 30"
    task = asyncio.create_task(BashTool().run({"command": command}, ctx))
    left = int(await wait_for_file(workspace / "left.pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_within(left, 1.5)


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
