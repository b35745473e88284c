"""Fixtures shared by the end-to-end tests: one scripted model per module, emptied before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.fakes.openai_server import ScriptedOpenAI


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
