"""A warm runtime per test (its own XDG_RUNTIME_DIR: tests never touch the user's), its warm processes
stopped afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.warm.runtime import WarmRuntime


@pytest.fixture
def runtime(tmp_path) -> Iterator[WarmRuntime]:
    warm = WarmRuntime(tmp_path / "run")
    yield warm
    warm.stop()
