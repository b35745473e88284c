from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.fakes.openai_server import ScriptedOpenAI


# One model and one server per module: starting the real process costs seconds, and every test
# works on its own connections anyway.
@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(default={"text": "ok"}) as srv:
        yield srv


@pytest.fixture(scope="module")
def live(model: ScriptedOpenAI) -> Iterator[ServerProcess]:
    with http_server(model.url) as server:
        yield server
