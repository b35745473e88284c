"""Fixtures shared by the end-to-end tests: one scripted model per module, emptied before each test; whether nginx
is here; and the ACP schema check (tests/acp_schema): a message of the agent that violates the schema fails the
test during which it was read."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from tests.acp_schema import check
from tests.e2e.cluster.nginx import NginxUnavailable, find_nginx
from tests.fakes.openai_server import ScriptedOpenAI


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Clients check messages in their reader threads, where raising would only end the reader: what they found
    (and the test did not already fail with) fails the test here, or is added to the failure it already has."""
    try:
        result = yield
    except BaseException as failure:
        for violation in check.take_found():
            if violation is not failure:
                failure.add_note(str(violation))
        raise
    check.fail_if_found()
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Messages read while fixtures close (the last updates of a shared agent) count too."""
    result = yield
    check.fail_if_found()
    return result


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
