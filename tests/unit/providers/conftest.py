from collections.abc import Iterator

import pytest
from tests.fakes.anthropic_server import ScriptedAnthropic
from tests.fakes.openai_server import ScriptedOpenAI


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as server:
        yield server
