"""A warm runtime per test (its own XDG_RUNTIME_DIR: tests never touch the user's), its warm processes
stopped afterwards; the name of this installation's warm socket."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.acp.wire import model_env
from tests.e2e.warm.runtime import WarmRuntime, warm_runtime


@pytest.fixture
def runtime() -> Iterator[WarmRuntime]:
    with warm_runtime() as warm:
        yield warm


@pytest.fixture(scope="module")
def socket_name(tmp_path_factory, model) -> str:
    """The name of this installation's warm socket (the same in every runtime directory)."""
    with warm_runtime() as warm:
        return warm.start(model_env(model.url, tmp_path_factory.mktemp("config"))).name
