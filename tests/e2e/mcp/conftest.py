"""Real MCP servers for the hub's tests: the fixture server (tests/fakes/mcp_server.py) over stdio,
Streamable HTTP and SSE on 127.0.0.1, and the reference server from npm over stdio."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e import npm
from tests.e2e.acp.conftest import agent, spawn  # noqa: F401  (for the tests through the agent)
from tests.e2e.mcp.servers import EVERYTHING
from tests.fakes.mcp_server import serve_http


@pytest.fixture(scope="module")
def events_file(tmp_path_factory) -> Iterator[Path]:
    """Where the fixture server records what it saw; the in-process HTTP servers read it from the environment."""
    path = tmp_path_factory.mktemp("mcp-events") / "events"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FIXTURE_EVENTS", str(path))
        yield path


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serve_http("http") as url:
        yield url


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with serve_http("sse") as url:
        yield url


@pytest.fixture(scope="session")
def everything() -> npm.NodeProgram:
    try:
        return npm.install(EVERYTHING, npm.CACHE / "mcp-everything")
    except npm.NpmUnavailable as exc:
        pytest.skip(str(exc))
    except npm.InstallFailed as exc:
        pytest.fail(f"installing {EVERYTHING.spec} failed: {exc}", pytrace=False)
