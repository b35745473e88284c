"""A child refuses a launch it cannot become exactly, before it touches the launcher's stdio."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from iac_code.warm.child import _take_launch, launcher_secrets

GOOD = {"key": "k", "argv": ["iac-code", "acp"], "env": {"HOME": "/"}, "cwd": "/", "umask": 0o22}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"key": "other"}, "another key"),
        ({"argv": []}, "malformed argv"),
        ({"argv": "iac-code acp"}, "malformed argv"),
        ({"argv": ["iac-code", 1]}, "malformed argv"),
        ({"env": {"A": 1}}, "malformed argv or environment"),
        ({"env": ["A=1"]}, "malformed argv or environment"),
        ({"cwd": None}, "malformed directory"),
        ({"umask": -1}, "malformed directory, umask"),
        ({"umask": 0o1000}, "malformed directory, umask"),
        ({"path": "/"}, "malformed directory, umask or import path"),
        ({"path": ["/elsewhere"]}, "another import path"),
        ({"cwd": "/no/such/directory"}, "cannot enter"),
    ],
)
def test_a_request_it_cannot_honour_is_refused(change, reason):
    request = GOOD | {"path": sys.path} | change
    refusal = _take_launch(request, "k", {})
    assert refusal is not None and reason in refusal


def test_no_request_is_refused():
    assert _take_launch(None, "k", {}) == "no request"


def test_the_secrets_are_read_from_the_launchers_environment_block(tmp_path):
    """Only the agent's secrets, as the launcher was started with them (not as it may have changed since)."""
    env = {"PATH": os.environ["PATH"], "IAC_CODE_API_KEY": "sk-started-with", "OPENAI_API_KEY": "", "SHELL_VAR": "x"}
    changes = "import os, sys; os.environ['ANTHROPIC_API_KEY'] = 'later'; print(flush=True); sys.stdin.read()"
    launcher = subprocess.Popen([sys.executable, "-c", changes], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert launcher.stdout is not None
    launcher.stdout.readline()  # running, its environment changed
    try:
        assert launcher_secrets(launcher.pid) == {"IAC_CODE_API_KEY": "sk-started-with", "OPENAI_API_KEY": ""}
    finally:
        launcher.communicate(b"")


def test_the_environment_block_of_a_process_gone_cannot_be_read():
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()
    with pytest.raises(OSError):
        launcher_secrets(gone.pid)
