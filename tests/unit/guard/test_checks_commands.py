"""The commands the checks start (their environment made by system.processes.command_environment) are
guarded once the start-up has installed the guard (cli.py): a change is refused unasked; an MCP server's are
not (its tools are judged instead). Importing the bash tool installs nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from iac_code.agent.policy import answer_check_command
from iac_code.guard.install import guard_checks_commands
from iac_code.guard.shim import GUARD_SOCKET, GUARD_TOKEN, REFUSED
from iac_code.system import processes
from iac_code.system.processes import command_environment, contained

RECORD = '#!/bin/sh\necho "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'


@pytest.fixture
def guard_installed(monkeypatch):
    """The guard as the start-up installs it, uninstalled afterwards (other tests' commands run without it)."""
    monkeypatch.setattr(processes, "_guard_environment", None)
    guard_checks_commands(answer_check_command)


def test_a_checks_command_may_read_but_never_change(tmp_path, monkeypatch, guard_installed):
    (tmp_path / "terraform").write_text(RECORD)
    (tmp_path / "terraform").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "ran.log"))
    env = command_environment()
    validate = subprocess.run(contained("terraform", "validate"), env=env, capture_output=True, text=True, timeout=30)
    apply = subprocess.run(contained("terraform", "apply"), env=env, capture_output=True, text=True, timeout=30)
    assert validate.returncode == 0, validate.stderr
    assert apply.returncode == REFUSED
    assert apply.stderr == "iac-code: terraform: refused: a check never changes infrastructure\n"
    assert (tmp_path / "ran.log").read_text() == "terraform validate\n"


def test_importing_the_tools_installs_no_guard():
    """Only the start-up installs it: importing every tool (the bash tool among them) and the loop does not."""
    program = (
        "import iac_code.agent.loop, iac_code.tools.registry\n"
        "from iac_code.system import processes\n"
        "assert processes._guard_environment is None, 'an import installed the guard'\n"
    )
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr


def test_an_unguarded_environment_has_no_guard(guard_installed):
    env = command_environment(guarded=False)
    assert GUARD_SOCKET not in env and GUARD_TOKEN not in env
