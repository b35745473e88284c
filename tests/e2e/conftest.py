"""Fixtures shared by the end-to-end tests: one scripted model per module, emptied before each test; whether nginx is here."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from tests.e2e.cluster.nginx import NginxUnavailable, find_nginx
from tests.fakes.openai_server import ScriptedOpenAI


@pytest.fixture(scope="session")
def nginx_available() -> None:
    """The cluster tests' balancer (tests/e2e/cluster/nginx.py): skipped without nginx, failed under CI=true."""
    try:
        find_nginx()
    except NginxUnavailable as exc:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"CI=true and {exc}", pytrace=False)
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_script(request) -> None:
    if "model" in request.fixturenames:
        request.getfixturevalue("model").reset()


@pytest.fixture
def workspace(tmp_path):
    """An empty workspace directory (tests/e2e/sessions/ has one with a Terraform file)."""
    path = tmp_path / "work"
    path.mkdir()
    return path
