"""Agents that can be restarted (and killed) over one config directory, and one scripted model per module."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "main.tf").write_text('resource "alicloud_vpc" "main" {\n  cidr_block = "10.0.0.0/8"\n}\n')
    return path


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def spawn(model, config_dir) -> Iterator[Callable[..., AgentProcess]]:
    """spawn(**env) → a fresh initialized agent on the test's config directory. Every agent not
    killed on purpose (see `kill`) must exit cleanly at teardown."""
    agents = Agents(model.url, config_dir)
    yield agents.start
    agents.close_all(killed_ok=True)


def kill(agent: AgentProcess) -> None:
    """kill -9, as a crash would."""
    agent.proc.send_signal(signal.SIGKILL)
    agent.proc.wait(10)


@pytest.fixture(scope="module")
def agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    """One agent shared by the module's tests that need no restart (each uses its own workspace)."""
    agents = Agents(model.url, tmp_path_factory.mktemp("config"))
    yield agents.start()
    agents.close_all()
