"""One scripted model and one `iac-code acp` process per test module (spawning costs ~1 s);
each test gets its own session, workspace and an emptied model script."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.e2e.acp.wire import AgentProcess, model_env
from tests.fakes.openai_server import ScriptedOpenAI


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


def _spawner(model: ScriptedOpenAI, config_dir) -> tuple[Callable[..., AgentProcess], list[AgentProcess]]:
    started: list[AgentProcess] = []

    def start(**extra_env: str) -> AgentProcess:
        agent = AgentProcess(model_env(model.url, config_dir, **extra_env))
        started.append(agent)
        agent.initialize()
        return agent

    return start, started


def _stop(started: list[AgentProcess]) -> None:
    for agent in started:
        assert agent.close() == 0
        assert not agent.stdout_problems, f"non-JSON on stdout: {agent.stdout_problems}"


@pytest.fixture
def spawn(model, tmp_path) -> Iterator[Callable[..., AgentProcess]]:
    """spawn(**env) → a fresh initialized AgentProcess talking to the `model` fixture."""
    start, started = _spawner(model, tmp_path / "config")
    yield start
    _stop(started)


@pytest.fixture(scope="module")
def agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    """The module's shared agent process."""
    start, started = _spawner(model, tmp_path_factory.mktemp("config"))
    yield start()
    _stop(started)
