"""Fixtures that run the real acpx client against a real `iac-code acp` and a scripted model.

acpx keeps its state under `~/.acpx`, so every run gets a HOME of its own."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.acp.wire import model_env
from tests.e2e.acpx.client import AGENT_COMMAND, Acpx, InstallFailed, NpmMissing, Run, install
from tests.fakes.openai_server import ScriptedOpenAI

RUN_TIMEOUT = 60

Runner = Callable[..., Run]


@pytest.fixture(scope="session")
def acpx_install() -> Acpx:
    try:
        return install()
    except NpmMissing as exc:
        pytest.skip(str(exc))
    except InstallFailed as exc:
        pytest.fail(f"installing acpx failed: {exc}", pytrace=False)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_script(request) -> None:
    if "model" in request.fixturenames:
        server = request.getfixturevalue("model")
        server._replies.clear()
        server.requests.clear()


class AcpxRunner:
    """acpx with our agent, one workspace and one HOME: `run(*args)` waits, `start(*args)` does not."""

    def __init__(self, acpx: Acpx, model: ScriptedOpenAI, root: Path) -> None:
        self.workspace = root / "work"
        self.workspace.mkdir()
        (root / "home").mkdir()
        self.env = model_env(model.url, root / "config", HOME=str(root / "home"))
        self._acpx = acpx

    def argv(self, *args: str) -> list[str]:
        return self._acpx.argv("--agent", AGENT_COMMAND, "--cwd", str(self.workspace), "--format", "json", *args)

    def run(self, *args: str, timeout: float = RUN_TIMEOUT) -> Run:
        done = subprocess.run(self.argv(*args), env=self.env, capture_output=True, text=True, timeout=timeout)
        return Run(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )


@pytest.fixture
def acpx(acpx_install, model, tmp_path) -> AcpxRunner:
    return AcpxRunner(acpx_install, model, tmp_path)
