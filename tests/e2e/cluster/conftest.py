"""Several real `iac-code acp --transport http` processes on one PostgreSQL behind a real nginx.

`cluster(model_url, database_url, count)` starts the instances (short heartbeat and lease, so a dead
instance is noticed within a second) and the balancer; tests reach everything through `Cluster.url`.
Without nginx the tests skip, except under CI=true, where they fail (CI must run them).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.e2e.cluster.nginx import nginx
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.fakes.openai_server import ScriptedOpenAI

HEARTBEAT_SECONDS = 0.4  # a silent instance is dead after three: 1.2 s (a loaded 2-core CI machine needs that)
LEASE_SECONDS = 2.0


@dataclass
class Cluster:
    url: str  # the balancer's /acp
    instances: dict[str, ServerProcess]  # by instance id
    workspace: Path  # a directory every instance sees, for sessions' cwd

    @property
    def base(self) -> str:
        return self.url.removesuffix("/acp")


@contextlib.contextmanager
def cluster(
    model_url: str,
    database_url: str,
    count: int = 2,
    heartbeat: float = HEARTBEAT_SECONDS,
    lease: float = LEASE_SECONDS,
    env: dict[str, str] | None = None,  # for every instance
) -> Iterator[Cluster]:
    with contextlib.ExitStack() as stack:
        instances = {}
        for n in range(1, count + 1):
            settings = {
                **(env or {}),
                "IAC_CODE_DATABASE_URL": database_url,
                "IAC_CODE_INSTANCE_ID": f"i{n}",
                "IAC_CODE_HEARTBEAT_SECONDS": str(heartbeat),
                "IAC_CODE_LEASE_SECONDS": str(lease),
            }
            instances[f"i{n}"] = stack.enter_context(http_server(model_url, env=settings))
        base = stack.enter_context(nginx([server.base.removeprefix("http://") for server in instances.values()]))
        workspace = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        try:
            yield Cluster(f"{base}/acp", instances, workspace)
        except BaseException:  # what the instances said, for the failure's report
            for name, server in instances.items():
                print(f"---- log of instance {name} (end) ----\n{server.log_text()[-20_000:]}", file=sys.stderr)
            raise


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(default={"text": "ok"}) as server:
        yield server


@pytest.fixture(scope="module")
def two(nginx_available, model: ScriptedOpenAI, pg_module_url: str) -> Iterator[Cluster]:
    """Two instances behind nginx, shared by a module's tests that leave them running."""
    with cluster(model.url, pg_module_url) as running:
        yield running
