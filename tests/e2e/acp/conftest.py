from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.e2e.acp.wire import AgentProcess, model_env
from tests.fakes.openai_server import ScriptedOpenAI


@pytest.fixture
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def spawn(model, tmp_path) -> Iterator[Callable[..., AgentProcess]]:
    """spawn(**env) → an initialized AgentProcess talking to the `model` fixture."""
    started: list[AgentProcess] = []

    def start(**extra_env: str) -> AgentProcess:
        agent = AgentProcess(model_env(model.url, tmp_path / "config", **extra_env))
        started.append(agent)
        agent.initialize()
        return agent

    yield start
    for agent in started:
        agent.close()
        assert not agent.stdout_problems, f"non-JSON on stdout: {agent.stdout_problems}"


@pytest.fixture
def agent(spawn) -> AgentProcess:
    return spawn()
