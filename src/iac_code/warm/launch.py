"""The `iac-code` command's entry point: `iac-code acp` on stdio hands its stdio to the user's warm
process when one is running (and starts one when none is); everything else, and every doubt, runs
`iac_code.cli` in this process as before.

Only the standard library's cheap modules are imported before the hand-off (and credentials.py, which
imports nothing more until it erases): it must cost a few milliseconds, or serving in-process would have
been as quick. It hands off only to the warm process (peer.py), and never sends the agent's secrets.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Mapping
from types import FrameType

from iac_code.credentials import SECRET_VARIABLES, withhold_from_environment, without_secrets
from iac_code.warm import peer, wire
from iac_code.warm.place import key_material, lock_holder, runtime_dir, socket_name, socket_path, startup_variable

# `acp` options that keep it on stdio; any other (--transport http, --port, --help, …) runs in-process.
_STDIO_FLAGS = {"--debug", "-d"}
_STDIO_OPTIONS = {"--log-file"}


def main() -> None:
    argv = sys.argv[1:]
    if on_stdio(argv) and warm_wanted(os.environ):
        status = hand_off(argv)
        if status is not None:
            sys.exit(status)
    from iac_code.cli import main as run_in_process

    sys.exit(run_in_process(argv))


def on_stdio(argv: list[str]) -> bool:
    """`iac-code acp` serving stdio, with only logging options: the one command a warm process serves.
    HTTP is only ever asked for on the command line (`--transport http`)."""
    if argv[:1] != ["acp"]:
        return False
    rest = iter(argv[1:])
    for arg in rest:
        name, equals, value = arg.partition("=")
        if name == "--transport":
            transport = value if equals else next(rest, "")
            if transport != "stdio":
                return False
        elif name in _STDIO_OPTIONS:
            if not equals and next(rest, None) is None:
                return False
        elif arg not in _STDIO_FLAGS:
            return False
    return True


def warm_wanted(env: Mapping[str, str]) -> bool:
    """IAC_CODE_WARM (or config.json's "warm") is "auto" or unset. Any other value, or a config.json
    that cannot be read, means in-process: there config.py says what is wrong."""
    if env.get("IAC_CODE_WARM"):  # as in config.py, an empty variable is an unset one
        return env["IAC_CODE_WARM"] == "auto"
    config_dir = env.get("IAC_CODE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".iac-code")
    try:
        with open(os.path.join(os.path.expanduser(config_dir), "config.json"), "rb") as file:
            config = json.load(file)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("warm", "auto") in ("auto", None)


def hand_off(argv: list[str]) -> int | None:
    """Serve `argv` through the warm process: the child's exit status, or None if it did not take the
    stdio (then this process serves it)."""
    directory = runtime_dir(os.environ)
    if directory is None or not hasattr(socket, "SO_PEERCRED"):  # where the warm process cannot prove itself
        return None
    material = key_material(os.environ)
    name = socket_name(material)
    path = socket_path(directory, name)
    if path is None:
        return None
    lock = os.path.join(directory, f"{name}.lock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with sock:
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            start_warm_process(directory, name)
            return None
        except OSError:
            return None
        doubt = peer.doubt(sock, lock)
        if doubt is not None:
            print(f"iac-code: not handed to the warm process: {doubt}; serving in-process", file=sys.stderr)
            start_warm_process(directory, name)  # when none runs: it puts its own socket in place
            return None
        return _through(sock, material, argv)


def _through(sock: socket.socket, material: str, argv: list[str]) -> int | None:
    """The hand-off to the warm process `sock` is connected to (peer.doubt said it is)."""
    sock.settimeout(wire.HANDSHAKE_SECONDS)
    try:
        umask = os.umask(0o077)
        os.umask(umask)
        env = without_secrets(os.environ)  # the child reads them from this process's environment block
        request = {"key": material, "argv": [sys.argv[0], *argv], "env": env, "cwd": os.getcwd()}
        wire.send(sock, request | {"umask": umask, "path": sys.path})
        if wire.receive(sock) != {"ready": True}:
            return None
    except (OSError, wire.WireError):
        return None
    # The child has the secrets: erased from this process's environment block before the child can serve, as
    # the in-process agent erases its own; kept here only in case this process serves after all.
    kept = {name: os.environ[name] for name in SECRET_VARIABLES if name in os.environ}
    withhold_from_environment()
    try:
        wire.send_stdio(sock)
        # From here on the child may hold the stdio: only its own word that it never started serving
        # (the connection ends before its pid) lets this process serve instead.
        sock.settimeout(None)
        started = wire.receive(sock)
    except (OSError, wire.WireError):
        started = None
    if started is None or "pid" not in started:
        os.environ.update(kept)
        return None
    return _wait_for_exit(sock)


def _wait_for_exit(sock: socket.socket) -> int:
    """Forward signals to the child until it reports its exit status."""

    def forward(signum: int, frame: FrameType | None) -> None:
        try:
            wire.send(sock, {"signal": signum})
        except OSError:
            pass

    for signum in wire.FORWARDED_SIGNALS:
        signal.signal(signum, forward)
    try:
        while (message := wire.receive(sock)) is not None:
            if isinstance(message.get("exit"), int):
                return int(message["exit"])
    except (OSError, wire.WireError):
        pass
    print("iac-code: the warm process's child ended without an exit status", file=sys.stderr)
    return 1


def start_warm_process(directory: str, name: str) -> None:
    """Start a warm process for this key, detached, unless one is starting or running (it holds the
    lock). A socket a dead one left behind, or another process planted, is replaced by the new one when it
    listens. This process only asks who holds the lock, never takes it: nobody can see it as the holder."""
    if lock_holder(os.path.join(directory, f"{name}.lock")) is None:
        _spawn_detached(directory, name)


def _spawn_detached(directory: str, name: str) -> None:
    """`iac_code.warm.server.main()` under this interpreter, in its own session, stdio on /dev/null, with
    exactly this import path (`-P`: nothing prepended, then replaced) and only the variables it needs (none
    of the credentials); reparented at once to init (a double fork), so no launcher is left a zombie."""
    command = [sys.executable, "-P", "-c", _SERVER_COMMAND, json.dumps(sys.path), directory, name]
    env = {key: value for key, value in os.environ.items() if _kept_for_warm_process(key)}
    try:
        # Not system/processes: a detached double fork (no launcher left a zombie), and stdlib only here.
        first = os.fork()  # noqa: TID251
    except OSError:
        return
    if first:
        os.waitpid(first, 0)
        return
    try:
        os.setsid()
        if os.fork() == 0:  # noqa: TID251
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.chdir("/")
            os.execve(sys.executable, command, env)
    finally:
        os._exit(0)


_SERVER_COMMAND = "import sys, json; sys.path[:] = json.loads(sys.argv[1]); import iac_code.warm.server as s; s.main()"


def _kept_for_warm_process(variable: str) -> bool:
    """What the warm process itself may see: where things are, the interpreter's start-up variables,
    its own settings. Never a key or token: its children get the launching process's environment."""
    if startup_variable(variable) or variable in ("IAC_CODE_WARM", "IAC_CODE_WARM_IDLE_SECONDS"):
        return True
    return variable in ("HOME", "PATH", "TMPDIR", "XDG_RUNTIME_DIR", "IAC_CODE_CONFIG_DIR", "USER", "LOGNAME")


if __name__ == "__main__":
    main()
