"""One scripted model and one `iac-code acp` process per test module (spawning costs ~1 s);
each test gets its own session, workspace and an emptied model script."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents


@pytest.fixture
def spawn(model, tmp_path) -> Iterator[Callable[..., AgentProcess]]:
    """spawn(**env) → a fresh initialized AgentProcess talking to the `model` fixture."""
    agents = Agents(model.url, tmp_path / "config")
    yield agents.start
    agents.close_all()


@pytest.fixture(scope="module")
def agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    """The module's shared agent process."""
    agents = Agents(model.url, tmp_path_factory.mktemp("config"))
    yield agents.start()
    agents.close_all()
