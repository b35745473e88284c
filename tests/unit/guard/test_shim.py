"""The shim and the channel, run for real: a stand-in terraform behind the guard's shim, and every way the
agent's answer can fail to come (each refuses: exit 126, the real program never runs)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from iac_code.agent.policy import answer_check_command
from iac_code.guard.channel import ShimRequest
from iac_code.guard.namespace import NamespaceSupport
from iac_code.guard.shim import GUARD_SOCKET, GUARD_TOKEN, REFUSED
from iac_code.guard.shims import Guard

RECORD = '#!/bin/sh\necho "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'


@pytest.fixture(autouse=True)
def no_credentials(tmp_path_factory, monkeypatch) -> None:
    """No credential under the home: these runs are not handed over (guard/handover.py; tested in
    tests/e2e/guard/test_credentials.py), the shim runs the program itself."""
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("empty-home")))


@pytest.fixture
def guard() -> Iterator[Guard]:
    made = Guard(NamespaceSupport(False, "not wanted in these tests"))
    yield made
    made.close()


@pytest.fixture
def stand_in(tmp_path) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    (directory / "terraform").write_text(RECORD)
    (directory / "terraform").chmod(0o755)
    return directory


def _environment(guard: Guard, stand_in: Path, tmp_path: Path, token: str | None) -> dict[str, str]:
    env = {"PATH": f"{stand_in}:/usr/bin:/bin", "STAND_IN_LOG": str(tmp_path / "ran.log")}
    if token is not None:
        guard.environment(env, token)
    else:
        guard.environment(env, "placeholder")
    return env


def _run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=30, check=False)


def _ran(tmp_path: Path) -> list[str]:
    log = tmp_path / "ran.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_run_that_changes_nothing_execs_the_real_program_with_its_argv(guard, stand_in, tmp_path):
    env = _environment(guard, stand_in, tmp_path, guard.register(answer_check_command))
    done = _run("terraform plan -out 'a plan'", env)
    assert done.returncode == 0, done.stderr
    assert _ran(tmp_path) == ["terraform plan -out a plan"]


def test_a_refused_change_exits_126_with_the_reason_and_never_runs(guard, stand_in, tmp_path):
    env = _environment(guard, stand_in, tmp_path, guard.register(answer_check_command))
    done = _run("terraform apply -auto-approve", env)
    assert done.returncode == REFUSED
    assert done.stderr == "iac-code: terraform: refused: a check never changes infrastructure\n"
    assert _ran(tmp_path) == []


def test_command_v_names_the_shim_only_for_programs_that_exist(guard, stand_in, tmp_path):
    env = _environment(guard, stand_in, tmp_path, guard.register(answer_check_command))
    done = _run("command -v terraform; command -v tofu || echo no tofu", env)
    assert done.stdout.splitlines() == [str(guard.links / "terraform"), "no tofu"]


@pytest.mark.parametrize(
    "break_it",
    [
        pytest.param(lambda env, guard: env.pop(GUARD_SOCKET), id="no-socket-variable"),
        pytest.param(lambda env, guard: env.pop(GUARD_TOKEN), id="no-token"),
        pytest.param(lambda env, guard: env.update({GUARD_TOKEN: "a-guess"}), id="wrong-token"),
        pytest.param(lambda env, guard: guard.forget(env[GUARD_TOKEN]), id="token-of-a-finished-call"),
        pytest.param(lambda env, guard: os.unlink(env[GUARD_SOCKET]), id="agent-gone"),
    ],
)
def test_the_shim_fails_closed(guard, stand_in, tmp_path, break_it):
    env = _environment(guard, stand_in, tmp_path, guard.register(lambda request: None))  # would let it run
    break_it(env, guard)
    done = _run("terraform plan", env)
    assert done.returncode == REFUSED
    assert done.stderr.startswith("iac-code: terraform: refused")
    assert _ran(tmp_path) == []


@pytest.mark.parametrize("reply", [b"", b"yes", b"run please", b"RUN", b"refuse:" + b"x" * 10000])
def test_a_malformed_or_missing_answer_refuses(guard, stand_in, tmp_path, reply):
    fake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = str(tmp_path / "fake.sock")
    fake.bind(path)
    fake.listen()

    def answer_once() -> None:
        connection, _ = fake.accept()
        with connection:
            while connection.recv(65536):
                pass
            connection.sendall(reply)

    threading.Thread(target=answer_once, daemon=True).start()
    env = _environment(guard, stand_in, tmp_path, guard.register(lambda request: None))
    env[GUARD_SOCKET] = path
    done = _run("terraform plan", env)
    fake.close()
    assert done.returncode == REFUSED
    assert _ran(tmp_path) == []


def test_the_channel_refuses_a_garbled_request(guard):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(guard.channel.path)
        connection.sendall(b"12:not-a-netstring")
        connection.shutdown(socket.SHUT_WR)
        answer = connection.recv(4096)
    assert answer == b"refuse:refused: malformed request to the agent's guard"


def test_the_guard_directory_and_socket_are_private(guard):
    assert guard.directory.stat().st_mode & 0o777 == 0o700
    assert Path(guard.channel.path).stat().st_mode & 0o777 == 0o600
    assert len(guard.channel.path.encode()) < 108


def test_the_request_carries_the_runs_directory_and_environment_but_not_the_token(guard, stand_in, tmp_path):
    seen: list[ShimRequest] = []

    def record(request: ShimRequest) -> str | None:
        seen.append(request)
        return None

    env = _environment(guard, stand_in, tmp_path, guard.register(record))
    (tmp_path / "prod").mkdir()
    done = _run(f"cd {tmp_path}/prod && TF_WORKSPACE='a b=c' terraform plan", env)
    assert done.returncode == 0, done.stderr
    [request] = seen
    assert (request.argv, request.cwd) == (["terraform", "plan"], str(tmp_path / "prod"))
    assert request.env["TF_WORKSPACE"] == "a b=c"
    assert request.env["STAND_IN_LOG"] == env["STAND_IN_LOG"]
    assert GUARD_TOKEN not in request.env
