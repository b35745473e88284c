"""system/processes' start for blocking code: `start`, `run`, `exited_within`, `stop_group`, on real children."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from tests.child_report import AGENTS_GROUP, OWN_GROUP, VARIABLE, reporting_program
from tests.processes import gone_within, wait_for_text

from iac_code.system.processes import PIPE, StartFailed, exited_within, run, start, stop_group

ENV = {"PATH": "/usr/bin:/bin"}


def test_run_reads_the_childs_output_and_exit_code_whole():
    said = "import sys; sys.stdout.write('out' * 50000); sys.stderr.write('err'); sys.exit(3)"
    done = run([sys.executable, "-c", said], env=ENV, timeout=60)
    assert (done.code, done.stdout, done.stderr) == (3, b"out" * 50000, b"err")


def test_run_starts_the_child_in_a_group_of_its_own_with_exactly_the_environment_given(tmp_path, monkeypatch):
    monkeypatch.setenv("IAC_TEST_INHERITED", "1")
    done = run([str(reporting_program(tmp_path))], env={**ENV, "IAC_TEST_GIVEN": "1"}, timeout=60, cwd=tmp_path)
    report = done.stdout.decode().splitlines()
    assert report[0] == OWN_GROUP
    assert f"{VARIABLE}IAC_TEST_GIVEN" in report
    assert f"{VARIABLE}IAC_TEST_INHERITED" not in report


def test_a_child_started_by_subprocess_alone_shares_the_group_which_the_report_tells(tmp_path):
    """The report can tell the difference (so the tests of the call sites can fail)."""
    import subprocess

    said = subprocess.run([str(reporting_program(tmp_path))], capture_output=True, check=True, env=ENV)
    assert said.stdout.decode().splitlines()[0] == AGENTS_GROUP


def test_on_a_timeout_run_ends_the_whole_group_not_the_leader_alone(tmp_path):
    """The background sleep holds the child's stdout: killing the leader alone, as subprocess.run does, would
    leave the wait for that pipe to end hanging for ever."""
    pid_file = tmp_path / "pid"
    line = f"sleep 600 & echo $! > {pid_file}; exec sleep 600"
    with pytest.raises(TimeoutError, match="sh took over 3 s"):
        run(["sh", "-c", line], env=ENV, timeout=3)
    assert gone_within(int(wait_for_text(pid_file)), 10)


def test_stop_group_ends_what_the_child_started():
    child = start(["sh", "-c", "sleep 600 & echo $!; wait"], env=ENV, stdout=PIPE)
    assert child.stdout is not None
    with child:
        background = int(child.stdout.readline())
        stop_group(child)
    assert child.returncode == -signal.SIGTERM
    assert gone_within(background, 10)


def test_stop_group_kills_a_child_that_ignores_sigterm():
    child = start(["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], env=ENV, stdout=PIPE)
    assert child.stdout is not None
    with child:
        assert child.stdout.readline() == b"ready\n"
        stop_group(child, grace=0.1)
    assert child.returncode == -signal.SIGKILL


def test_exited_within_tells_a_running_child_from_an_ended_one():
    running = start(["sleep", "600"], env=ENV)
    try:
        assert not exited_within(running, 0.05)
    finally:
        stop_group(running)
    ended = start(["true"], env=ENV)
    assert exited_within(ended, 60) and ended.returncode == 0


def test_a_failing_preexec_fn_is_an_oserror():
    def fail() -> None:
        raise RuntimeError("no limits here")

    with pytest.raises(StartFailed) as raised:
        start(["true"], env=ENV, preexec_fn=fail)
    assert isinstance(raised.value, OSError)


def test_a_missing_program_is_an_oserror(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        run([str(tmp_path / "absent")], env=ENV, timeout=60)
