"""A child of the warm process: takes over one launch (its environment, directory, umask, import path,
argv, then its stdio) and runs `iac_code.cli` exactly as the launcher would have in-process. The agent's
secrets are not in the launch's message: the child reads them from the launcher's environment block.

Everything the launch asks is applied before the child says it is ready, so that a refusal leaves the
launcher free to serve itself; once the child reports its pid it owns the stdio. It ends with its exit
status on the connection, and ends early (as if stdin had closed) when the launcher's connection ends:
a launcher killed with SIGKILL leaves no child behind.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import sys
import threading
import traceback
from typing import Any, NoReturn

from iac_code.credentials import SECRET_VARIABLES, without_secrets
from iac_code.system.peers import peer_credentials
from iac_code.warm import wire


def serve_launch(connection: socket.socket, material: str) -> NoReturn:
    """Run in the freshly forked child; never returns to the warm process's code."""
    status = 1
    try:
        _reset_signals()
        status = _serve(connection, material)
    except BaseException:  # whatever happens, this process must end here
        traceback.print_exc()
    finally:
        os._exit(status)


def _reset_signals() -> None:
    """The handlers a fresh interpreter has (the warm process's SIGTERM handler is not for children)."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _serve(connection: socket.socket, material: str) -> int:
    launcher = peer_credentials(connection)
    if launcher is None or launcher[1] != os.getuid():
        return 0
    connection.settimeout(wire.HANDSHAKE_SECONDS)
    try:
        request = wire.receive(connection)
        refusal = _take_launch(request, material, launcher_secrets(launcher[0]))
        if refusal:
            wire.send(connection, {"refused": refusal})
            return 0
        wire.send(connection, {"ready": True})
        stdio = wire.receive_stdio(connection)
    except (OSError, wire.WireError):
        return 0  # the launcher serves itself, or is gone (or its environment cannot be read: the same)
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
        os.close(fd)
    connection.settimeout(None)
    wire.send(connection, {"pid": os.getpid()})
    threading.Thread(target=_watch_launcher, args=(connection,), name="warm-launcher", daemon=True).start()
    status = _run_cli(sys.argv[1:])
    atexit._run_exitfuncs()  # what the interpreter's exit would run in-process (os._exit skips it)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        wire.send(connection, {"exit": status})
    except OSError:
        pass
    return status


def launcher_secrets(pid: int) -> dict[str, str]:
    """The agent's secrets as the launcher (this connection's peer, this user's) was started with them: read
    from its environment block, /proc/PID/environ, rather than sent, so that a launcher never sends them to
    whoever listens on the socket. The launcher erases them there once this child says it is ready."""
    with open(f"/proc/{pid}/environ", "rb") as file:
        block = file.read()
    found: dict[str, str] = {}
    for entry in block.split(b"\0"):
        name, equals, value = (os.fsdecode(part) for part in entry.partition(b"="))
        if equals and name in SECRET_VARIABLES:
            found.setdefault(name, value)  # the first, as getenv() and os.environ take it
    return found


def _take_launch(request: dict[str, Any] | None, material: str, secrets: dict[str, str]) -> str | None:
    """Become the launch `request` describes, with the `secrets` read from its launcher; the reason not to,
    if any."""
    if request is None:
        return "no request"
    if request.get("key") != material:
        return "another key: the launcher runs other code or another interpreter"
    argv, env, cwd, umask, path = (request.get(name) for name in ("argv", "env", "cwd", "umask", "path"))
    if not (_strings(argv) and argv and isinstance(env, dict) and _strings(list(env.items()), pairs=True)):
        return "malformed argv or environment"
    if not (isinstance(cwd, str) and isinstance(umask, int) and 0 <= umask <= 0o777 and _strings(path)):
        return "malformed directory, umask or import path"
    if path != sys.path:
        return "another import path"
    try:
        os.chdir(cwd)
    except (OSError, ValueError) as exc:
        return f"cannot enter {cwd!r}: {exc}"
    os.umask(umask)
    os.environ.clear()
    os.environ.update(without_secrets(env) | secrets)
    sys.argv[:] = argv
    return None


def _strings(items: object, *, pairs: bool = False) -> bool:
    if not isinstance(items, list):
        return False
    if pairs:
        return all(isinstance(k, str) and isinstance(v, str) for k, v in items)
    return all(isinstance(item, str) for item in items)


def _run_cli(argv: list[str]) -> int:
    print(f"iac-code: served by the warm process (child pid {os.getpid()})", file=sys.stderr, flush=True)
    from iac_code.cli import main

    try:
        return main(argv)
    except SystemExit as exc:
        return _exit_status(exc.code)
    except BaseException:  # in-process too: a traceback and status 1
        traceback.print_exc()
        return 1


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _watch_launcher(connection: socket.socket) -> None:
    """Signals the launcher forwards are raised here; its end (killed, even with SIGKILL) stops the
    child as SIGTERM would (the stdio server ends as when stdin closes)."""
    try:
        while (message := wire.receive(connection)) is not None:
            if message.get("signal") in wire.FORWARDED_SIGNALS:
                os.kill(os.getpid(), message["signal"])
    except (OSError, wire.WireError):
        pass
    os.kill(os.getpid(), signal.SIGTERM)
