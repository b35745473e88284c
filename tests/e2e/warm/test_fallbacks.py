"""Every way a hand-off can go wrong ends with the launch served in-process at once — unless the child
already took the stdio, and then the launcher never serves it too."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, answer_text, model_env
from tests.e2e.warm.runtime import IAC_CODE, WarmRuntime, lock_is_free, served_by, wait_for_lock

from iac_code.warm import wire
from iac_code.warm.place import try_lock

Behaviour = Callable[[socket.socket], None]


@pytest.fixture
def env(model, tmp_path) -> dict[str, str]:
    return model_env(model.url, tmp_path / "config")


def served_in_process(runtime: WarmRuntime, env: dict[str, str], workspace: Path) -> AgentProcess:
    """A launch that answers a prompt and exits 0, served by itself."""
    agent = runtime.launch(env)
    agent.initialize()
    assert answer_text(agent.prompt(agent.new_session(workspace), "hi")[1]) == "ok"
    assert agent.close() == 0
    assert served_by(agent) is None, "".join(agent.stderr_lines)
    assert not agent.stdout_problems
    return agent


def test_the_first_launch_serves_itself_and_starts_the_warm_process(runtime, model, env, workspace):
    model.default = {"text": "ok"}
    served_in_process(runtime, env, workspace)
    path = runtime.wait_for_socket()
    assert (runtime.directory.stat().st_mode & 0o777, path.stat().st_mode & 0o777) == (0o700, 0o600)
    agent = runtime.launch(env)
    agent.initialize()
    assert agent.close() == 0
    assert served_by(agent) is not None


def test_a_stale_socket_is_replaced_while_the_launch_serves_itself(runtime, model, env, workspace, socket_name):
    model.default = {"text": "ok"}
    runtime.directory.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(runtime.directory / socket_name))  # the file stays; nobody listens
    served_in_process(runtime, env, workspace)
    assert runtime.wait_for_socket().name == socket_name


@pytest.mark.parametrize("spoil", ["mode", "owner", "symlink"])
def test_a_socket_directory_that_is_not_private_is_not_used(runtime, model, env, workspace, tmp_path, spoil):
    model.default = {"text": "ok"}
    if spoil == "mode":
        runtime.directory.mkdir(mode=0o700)
        runtime.directory.chmod(0o755)
    elif spoil == "owner":
        if os.getuid() != 0:
            pytest.skip("giving a directory to another user takes root")
        runtime.directory.mkdir(mode=0o700)
        os.chown(runtime.directory, 65534, 65534)
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        runtime.directory.symlink_to(tmp_path / "elsewhere")
    served_in_process(runtime, env, workspace)
    assert not list(runtime.directory.iterdir()), "nothing is created in it"


def test_the_warm_process_refuses_a_launch_with_another_key(runtime, env):
    path = runtime.start(env)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as launcher:
        launcher.connect(str(path))
        request = {"key": "another version", "argv": ["iac-code", "acp"], "env": {}, "cwd": "/", "umask": 0o22}
        wire.send(launcher, request | {"path": []})
        reply = wire.receive(launcher)
    assert reply is not None and "another key" in reply["refused"]


def _refuse(conn: socket.socket) -> None:
    wire.receive(conn)
    wire.send(conn, {"refused": "another key"})


def _vanish_after_the_request(conn: socket.socket) -> None:
    wire.receive(conn)


def _vanish_with_the_stdio(conn: socket.socket) -> None:
    wire.receive(conn)
    wire.send(conn, {"ready": True})
    for fd in wire.receive_stdio(conn):
        os.close(fd)


def _vanish_after_taking_the_stdio(conn: socket.socket) -> None:
    wire.receive(conn)
    wire.send(conn, {"ready": True})
    fds = wire.receive_stdio(conn)
    wire.send(conn, {"pid": 1})
    for fd in fds:
        os.close(fd)


@pytest.fixture
def fake_warm(runtime, socket_name) -> Iterator[Callable[[Behaviour], None]]:
    """fake_warm(behaviour): a warm process that answers one launch that way: this process, which runs the
    launcher's interpreter, holding the warm lock (its pid in it) and listening at the warm socket's path, as
    the warm process does (the launcher checks all three before it sends anything: test_planted_socket.py)."""
    runtime.directory.mkdir(mode=0o700)
    path = runtime.directory / socket_name
    lock = try_lock(str(path.with_suffix(".lock")))
    assert lock is not None
    os.write(lock, f"{os.getpid()}\n".encode())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve(behaviour: Behaviour) -> None:
        def run() -> None:
            conn, _ = listener.accept()
            with conn:
                behaviour(conn)

        threading.Thread(target=run, daemon=True).start()

    yield serve
    listener.close()
    os.close(lock)


@pytest.mark.parametrize("behaviour", [_refuse, _vanish_after_the_request, _vanish_with_the_stdio])
def test_a_refusal_or_death_before_the_child_starts_leaves_the_launch_to_serve_itself(
    runtime, model, env, workspace, fake_warm, behaviour
):
    model.default = {"text": "ok"}
    fake_warm(behaviour)
    served_in_process(runtime, env, workspace)


def test_once_the_child_took_the_stdio_the_launcher_never_serves_it(runtime, env, fake_warm):
    fake_warm(_vanish_after_taking_the_stdio)
    agent = runtime.launch(env)
    agent.start_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert agent.proc.wait(30) == 1
    agent.close()
    assert any("ended without an exit status" in line for line in agent.stderr_lines)
    with pytest.raises(AssertionError, match="agent exited"):
        agent.next(timeout=5)  # nothing answered initialize


@pytest.mark.parametrize("where", ["environment", "config.json"])
def test_warm_off_serves_in_process_and_starts_nothing(runtime, model, env, workspace, tmp_path, where):
    model.default = {"text": "ok"}
    if where == "environment":
        env = {**env, "IAC_CODE_WARM": "off"}
    else:
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "config.json").write_text(json.dumps({"warm": "off"}))
    served_in_process(runtime, env, workspace)
    assert not runtime.directory.exists()


def test_a_runtime_directory_too_deep_for_a_socket_serves_in_process_and_starts_nothing(
    model, env, workspace, tmp_path
):
    """A Unix socket's address holds 107 bytes: past that, no warm process is started only to fail binding."""
    model.default = {"text": "ok"}
    deep = WarmRuntime(tmp_path / ("d" * 100))
    served_in_process(deep, env, workspace)
    assert list(deep.directory.iterdir()) == []  # no lock taken, no log: nothing was started


def test_an_unknown_warm_setting_is_a_configuration_error(runtime, env):
    agent = runtime.launch({**env, "IAC_CODE_WARM": "sometimes"})
    assert agent.close() == 2
    assert any("IAC_CODE_WARM must be one of auto, off" in line for line in agent.stderr_lines)
    assert not runtime.directory.exists()


def test_the_warm_process_stops_when_idle_and_removes_its_socket(runtime, env):
    path = runtime.start({**env, "IAC_CODE_WARM_IDLE_SECONDS": "1"})
    assert wait_for_lock(path.with_suffix(".lock"), timeout=30)
    assert not path.exists()
    assert "no launch for 1 s: stopping" in runtime.logs()


def test_the_warm_process_stops_when_the_installed_code_changes(runtime, env, tmp_path):
    packages = tmp_path / "packages"
    packages.mkdir()
    path = runtime.start({**env, "PYTHONPATH": str(packages)})
    (packages / "new_package.py").write_text("")  # an install: a directory on the import path changed
    assert wait_for_lock(path.with_suffix(".lock"), timeout=30)
    assert not path.exists()
    assert "the installed code changed: stopping" in runtime.logs()
    assert lock_is_free(path.with_suffix(".lock"))


def test_headless_and_http_never_hand_off(runtime, model, env, workspace):
    model.default = {"text": "ok"}
    runtime.start(env)
    headless = subprocess.run(
        [IAC_CODE, "-p", "hi"], env=runtime.env(env), cwd=workspace, capture_output=True, text=True, timeout=60
    )
    assert (headless.returncode, headless.stdout.strip()) == (0, "ok")
    assert "served by the warm process" not in headless.stderr
    command = [IAC_CODE, "acp", "--transport", "http", "--port", "0"]
    server = subprocess.Popen(
        command, env=runtime.env(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert server.stderr is not None
    for line in server.stderr:  # in-process: this process itself listens
        assert "served by the warm process" not in line
        if "ACP over HTTP+SSE" in line:
            break
    server.send_signal(signal.SIGTERM)
    assert server.wait(30) == 0
