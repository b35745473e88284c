"""A warm runtime per test (its own XDG_RUNTIME_DIR: tests never touch the user's), its warm processes
stopped afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.warm.runtime import WarmRuntime, warm_runtime


@pytest.fixture
def runtime() -> Iterator[WarmRuntime]:
    with warm_runtime() as warm:
        yield warm
