"""The warm process: everything a first turn needs imported once, then one forked child per launch.

Started by a launcher that found none (launch.py), detached, with its stdio on /dev/null and its log
in the runtime directory. It holds `<name>.lock` for its whole life, so there is one per key, and it is
the process that listens on `<name>.sock`: what a launcher checks before it sends anything (peer.py). It
stops after `warm_idle_seconds` without a launch, when the installed code no longer matches its key (a new
install: launchers then look for another socket), or when another process's socket replaced its own,
removing its socket (only its own).

It never runs an event loop or a thread of its own, and it forks only while it has no other thread:
a child starts as a copy of one quiet thread. It opens no store, client or TLS context: children make
their own from the launching process's settings.
"""

from __future__ import annotations

import logging
import os
import selectors
import signal
import socket
import sys
import threading
import time

from iac_code.warm.child import serve_launch
from iac_code.warm.place import key_material, runtime_dir, socket_name, socket_path, try_lock

logger = logging.getLogger(__name__)

CHECK_SECONDS = 5.0  # how often the installed code is compared with the key, the socket checked, children reaped


def main() -> None:
    """`python -P -c … PATH DIRECTORY NAME` (launch.py): serve the socket NAME.sock in DIRECTORY."""
    directory, name = sys.argv[2], sys.argv[3]
    os.umask(0o077)  # its log and lock are private, as its socket
    if runtime_dir(os.environ) != directory:
        return
    logging.basicConfig(
        filename=os.path.join(directory, f"{name}.log"),
        level=logging.INFO,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
    )
    material = key_material(os.environ)
    if socket_name(material) != name:
        logger.info("the installed code changed since the launch that started this process: not serving")
        return
    lock = _lock(os.path.join(directory, f"{name}.lock"))
    if lock is None:
        return  # another warm process holds the key
    idle_seconds = _idle_seconds()
    if idle_seconds is None:
        return
    _import_for_first_turn()
    signal.signal(signal.SIGTERM, _stop)
    # Each refusal is said in the log, which is all a detached process has.
    path = socket_path(directory, name)
    if path is None:
        logger.error("not serving: the socket's path in %s is too long for a Unix socket", directory)
        return
    try:
        listener, bound = _listen(path)
    except OSError as exc:
        logger.error("not serving: cannot listen on %s: %s", path, exc)
        return
    logger.info("serving %s (stops after %g s without a launch)", path, idle_seconds)
    try:
        _accept_until_idle(listener, material, idle_seconds, inherited=[lock], socket_file=(path, bound))
    finally:
        if _is_ours(path, bound):
            _remove(path)
        listener.close()
        logger.info("stopped")


def _lock(path: str) -> int | None:
    """Take the key's lock (the pid written in it, for whoever needs to stop this process)."""
    fd = try_lock(path)
    if fd is None:
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _idle_seconds() -> float | None:
    """This process's own settings (never its children's): whether to run at all, and for how long idle."""
    from iac_code.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        logger.error("%s", exc)
        return None
    return settings.warm_idle_seconds if settings.warm == "auto" else None


def _import_for_first_turn() -> None:
    """What the stdio start-up imports in its thread (serve.import_stdio_server), the command line, and both model SDKs,
    loaded for good (preload.py) so that every child shares them."""
    from iac_code.preload import loading_for_good
    from iac_code.serve import import_stdio_server

    import_stdio_server()
    with loading_for_good():
        import iac_code.cli
        import iac_code.transports.stdio
        from iac_code.providers.sdk_extras import without_unused_extras

        with without_unused_extras():
            import iac_code.providers.anthropic
            import iac_code.providers.openai_chat  # noqa: F401


def _listen(path: str) -> tuple[socket.socket, os.stat_result]:
    """The socket, 0600 from the start (the directory is 0700 too), listening before its name appears:
    a launcher never finds it refusing; and its file, to tell it from another put in its place later. A
    socket left by a dead holder of the lock, or planted by another process, is replaced."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound = f"{path}.{os.getpid()}"
    umask = os.umask(0o177)
    try:
        listener.bind(bound)
    finally:
        os.umask(umask)
    listener.listen(64)
    bound_file = os.stat(bound)
    os.replace(bound, path)
    return listener, bound_file


def _accept_until_idle(
    listener: socket.socket,
    material: str,
    idle_seconds: float,
    inherited: list[int],
    socket_file: tuple[str, os.stat_result],
) -> None:
    last_launch = last_check = time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        while True:
            ready = selector.select(timeout=min(CHECK_SECONDS, idle_seconds))
            _reap_children()
            now = time.monotonic()
            if ready:
                connection, _ = listener.accept()
                last_launch = now
                _fork_child(connection, material, [listener.fileno(), selector.fileno(), *inherited])
                continue
            if now - last_launch >= idle_seconds:
                logger.info("no launch for %g s: stopping", idle_seconds)
                return
            if now - last_check >= CHECK_SECONDS:
                last_check = now
                if key_material(os.environ) != material:
                    logger.info("the installed code changed: stopping")
                    return
                if not _is_ours(*socket_file):
                    # Launchers now refuse the socket there (peer.py): this process would idle on unreached.
                    logger.warning("the socket at %s is no longer this process's: stopping", socket_file[0])
                    return


def _fork_child(connection: socket.socket, material: str, parent_fds: list[int]) -> None:
    """One child per launch, forked before anything is read, so that a slow or hostile peer holds up
    only its own child."""
    assert threading.active_count() == 1, "forking with other threads running"
    # Blocked until the child has reset its handlers: this process's SIGTERM handler must not run there.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        pid = os.fork()  # noqa: TID251 (a copy of this process and its imports, which is what it is for: no exec)
    except OSError:
        logger.exception("cannot fork")
        pid = -1
    if pid == 0:
        for fd in parent_fds:
            os.close(fd)
        serve_launch(connection, material)  # never returns
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    connection.close()
    logger.info("launch served by child %d", pid)


def _reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)  # through main's finally: the socket goes


def _is_ours(path: str, bound: os.stat_result) -> bool:
    """The socket at `path` is still the one this process bound (not removed, nor replaced by another's)."""
    try:
        return os.path.samestat(os.stat(path), bound)
    except OSError:
        return False


def _remove(path: str) -> None:
    """Unlink this process's socket (the caller checked it is still this process's)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
