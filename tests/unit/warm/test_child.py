"""A child refuses a launch it cannot become exactly, before it touches the launcher's stdio."""

from __future__ import annotations

import sys

import pytest

from iac_code.warm.child import _take_launch

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
    refusal = _take_launch(request, "k")
    assert refusal is not None and reason in refusal


def test_no_request_is_refused():
    assert _take_launch(None, "k") == "no request"
