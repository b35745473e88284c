"""The commands the checks start (their environment made by system.processes.command_environment) are
guarded once the bash tool is loaded: a change is refused unasked; an MCP server's are not (its tools are
judged instead)."""

from __future__ import annotations

import subprocess

import iac_code.tools.shell  # noqa: F401  (loading the bash tool guards the checks' commands)
from iac_code.guard.shim import GUARD_SOCKET, GUARD_TOKEN, REFUSED
from iac_code.system.processes import command_environment, contained

RECORD = '#!/bin/sh\necho "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'


def test_a_checks_command_may_read_but_never_change(tmp_path, monkeypatch):
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


def test_an_unguarded_environment_has_no_guard():
    env = command_environment(guarded=False)
    assert GUARD_SOCKET not in env and GUARD_TOKEN not in env
