"""A socket at the warm process's path that is not the warm process's (issue 36: a daemon that outlived its call
replaced it, and every later launch handed it the API key and its editor's stdio): the launcher sends it nothing
at all, serves in-process and says why on stderr."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, answer_text, model_env
from tests.e2e.warm.runtime import WarmRuntime, served_by, wait_until_gone

PLANTED = Path(__file__).with_name("planted.py")
KEY = "sk-planted-test-key-0f9e8d7c"
OPENAI_KEY = "sk-planted-test-openai-1a2b3c"


class Planted:
    """planted.py running: its pid, and what each launch that connected to it sent."""

    def __init__(self, process: subprocess.Popen[bytes], record: Path) -> None:
        self.process = process
        self.record = record

    @property
    def pid(self) -> int:
        return self.process.pid

    def connections(self, expected: int, timeout: float = 15) -> list[dict[str, object]]:
        """The `expected` connections' records, once each has ended (planted.py writes one when it does)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = self.record.read_text().splitlines() if self.record.exists() else []
            if len(lines) >= expected:
                return [json.loads(line) for line in lines]
            time.sleep(0.05)
        raise AssertionError(f"planted.py recorded fewer than {expected} connections")


Plant = Callable[..., Planted]


@pytest.fixture
def plant(runtime: WarmRuntime, socket_name: str, tmp_path: Path) -> Iterator[Plant]:
    """plant(interpreter=…, holding_the_lock=…): planted.py listening at this installation's warm socket."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*, interpreter: list[str] | None = None, holding_the_lock: bool = False, **env: str) -> Planted:
        runtime.directory.mkdir(mode=0o700, exist_ok=True)
        path = runtime.directory / socket_name
        record = tmp_path / f"planted-{len(started)}.jsonl"
        command = [*(interpreter or [sys.executable]), str(PLANTED), str(path), str(record)]
        if holding_the_lock:
            command.append(str(path.with_suffix(".lock")))
        process = subprocess.Popen(command, stdout=subprocess.PIPE, env={**os.environ, **env})
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == b"listening\n"
        return Planted(process, record)

    yield start
    for process in started:
        process.kill()
        process.wait()


@pytest.fixture
def env(model, tmp_path) -> dict[str, str]:
    model.default = {"text": "ok"}
    return model_env(model.url, tmp_path / "config", IAC_CODE_API_KEY=KEY, OPENAI_API_KEY=OPENAI_KEY)


def served_in_process(runtime: WarmRuntime, env: dict[str, str], workspace: Path) -> AgentProcess:
    """A whole session answered by the launcher itself."""
    agent = runtime.launch(env)
    agent.initialize()  # answered on the launcher's own stdout
    assert answer_text(agent.prompt(agent.new_session(workspace), "hi")[1]) == "ok"
    assert agent.close() == 0
    assert served_by(agent) is None, "".join(agent.stderr_lines)
    assert not agent.stdout_problems
    return agent


def why(agent: AgentProcess) -> str:
    """The one line on its stderr that says why it served itself."""
    lines = [line for line in agent.stderr_lines if "serving in-process" in line]
    assert len(lines) == 1, "".join(agent.stderr_lines)
    return lines[0]


NOTHING = {"received": "", "descriptors": 0}


def test_a_socket_planted_over_the_running_warm_process_gets_nothing(runtime, env, workspace, plant):
    path = runtime.start(env)
    warm_pid = int(path.with_suffix(".lock").read_text())
    planted = plant()

    agent = served_in_process(runtime, env, workspace)

    assert planted.connections(1) == [NOTHING]
    assert f"pid {planted.pid} listens on the warm socket" in why(agent)
    # the warm process finds its socket gone, and stops rather than listen where no launch reaches it
    assert wait_until_gone(warm_pid)
    assert "no longer this process's: stopping" in runtime.logs()


def test_a_socket_planted_where_no_warm_process_runs_gets_nothing_and_a_warm_process_replaces_it(
    runtime, env, workspace, plant, socket_name
):
    planted = plant()
    planted_socket = os.stat(runtime.directory / socket_name)

    agent = served_in_process(runtime, env, workspace)

    assert planted.connections(1) == [NOTHING]
    assert f"pid {planted.pid} listens on the warm socket, but no warm process holds its lock" in why(agent)
    # the launch started a warm process, which put its own socket in place of the planted one
    deadline = time.monotonic() + 60
    while os.path.samestat(os.stat(runtime.directory / socket_name), planted_socket):
        assert time.monotonic() < deadline, runtime.logs()
        time.sleep(0.05)
    agent = runtime.launch(env)
    agent.initialize()
    assert agent.close() == 0
    assert served_by(agent) is not None
    assert planted.connections(1) == [NOTHING]  # nothing more reached it


def test_a_lock_holder_that_is_not_this_interpreter_gets_nothing(runtime, env, workspace, plant, tmp_path):
    """planted.py holding the warm lock, its pid in it, under a copy of the interpreter: only the executable
    tells it from the warm process."""
    interpreter = tmp_path / "python-copy"
    shutil.copy(os.path.realpath(sys.executable), interpreter)
    planted = plant(interpreter=[str(interpreter)], holding_the_lock=True, PYTHONHOME=sys.base_prefix)

    agent = served_in_process(runtime, env, workspace)

    assert planted.connections(1) == [NOTHING]
    assert f"pid {planted.pid} runs {interpreter}, not " in why(agent)
