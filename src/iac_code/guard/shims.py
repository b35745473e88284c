"""The guard's private directory: the shim script, a link to it for each guarded program the command's
PATH holds, the channel's socket, and (namespace mode) the place the real binaries stay reachable.

One per agent process, made on first use (`process_guard`). A short path under the system's temporary
directory: a Unix socket's path must stay under 108 bytes.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import marshal
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from iac_code.cloud_credentials import credential_paths
from iac_code.guard.channel import Decide, GuardChannel
from iac_code.guard.handover import HandOver
from iac_code.guard.namespace import MountPlan, NamespaceSupport, beneath_any, coverable, probe_namespaces
from iac_code.guard.shim import GUARD_REAL, GUARD_SOCKET, GUARD_TOKEN
from iac_code.infra_commands import GUARDED_PROGRAMS
from iac_code.system.own_state import kept_out, shown_to_commands
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

logger = logging.getLogger(__name__)

SHIM_SOURCE = Path(__file__).with_name("shim.py")
SHIM_NAME = "shim"
SHIM_CODE_NAME = "shim.code"
SOCKET_NAME = "socket"
LINKS_NAME = "bin"  # the directory put first on PATH
REAL_NAME = "real"  # namespace mode: the original file system, seen from here
EMPTY_FOLDER_NAME = "empty"  # namespace mode: bound over each credential folder
EMPTY_FILE_NAME = "empty-file"  # … and credential file


class Guard:
    """The process's shims and channel. `environment()` makes a command's environment guarded."""

    def __init__(self, namespaces: NamespaceSupport | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="iacg-"))  # 0700
        self.links = self.directory / LINKS_NAME
        self.links.mkdir(mode=0o700)
        self.shim = self.directory / SHIM_NAME
        self.real_root = self.directory / REAL_NAME
        self.real_root.mkdir(mode=0o700)
        (self.directory / EMPTY_FOLDER_NAME).mkdir(mode=0o500)
        (self.directory / EMPTY_FILE_NAME).touch(mode=0o400)
        # The shim's code compiled once, here: a script run by path is compiled on every run (~0.5 ms of the
        # shim's budget), a marshalled code object only loaded. The same interpreter runs both.
        code = self.directory / SHIM_CODE_NAME
        code.write_bytes(marshal.dumps(compile(SHIM_SOURCE.read_text(), str(SHIM_SOURCE), "exec")))
        python = os.path.realpath(sys.executable)
        self.shim.write_text(f"#!{python} -IS\nimport marshal\nexec(marshal.loads(open({str(code)!r}, 'rb').read()))\n")
        self.shim.chmod(0o700)
        self.channel = GuardChannel(str(self.directory / SOCKET_NAME), HandOver(self.directory, self.links))
        self._links_lock = threading.Lock()
        self.namespaces = namespaces if namespaces is not None else probe_namespaces(self.directory)

    @property
    def protection(self) -> str:
        """What guards a command here, for /status and the log: what is in force, and what is missing and why."""
        namespaces = self.namespaces
        if not namespaces.usable:
            return (
                "PATH shims, cloud credentials withheld from the environment only (credential files and absolute"
                f" paths reachable, no PID namespace): {namespaces.why_not}"
            )
        if not namespaces.own_pids:
            return (
                "PATH shims + mount namespace (credential files hidden), no PID namespace (a command's daemons"
                f" are ended by the reaper, /proc shows the agent): {namespaces.why_no_pids}"
            )
        return "PATH shims + mount namespace (credential files hidden) + PID namespace"

    def register(self, decide: Decide) -> str:
        """A token whose commands' shims `decide` answers, until `forget(token)`."""
        return self.channel.register(decide)

    def forget(self, token: str) -> None:
        self.channel.forget(token)

    @contextlib.contextmanager
    def guarding(self, env: dict[str, str], decide: Decide, kept: Sequence[str] = ()) -> Iterator[None]:
        """`env` (changed in place) guarded with `decide` while inside; after, its shims are refused (a
        command left running can no longer ask). `kept`: paths of the agent's state the command may reach."""
        token = self.register(decide)
        try:
            self.environment(env, token, kept=kept)
            yield
        finally:
            self.forget(token)

    def environment(
        self, env: dict[str, str], token: str, unreadable: Sequence[str] = (), kept: Sequence[str] = ()
    ) -> None:
        """Guard the command whose environment is `env` (changed in place), answered for `token`; in namespace
        mode, `unreadable` paths show empty, and of the agent's own state only the `kept` paths show."""
        path = env.get("PATH", os.defpath)
        entries = [entry for entry in path.split(os.pathsep) if entry != str(self.links)]
        self._link_programs(entries)
        env["PATH"] = os.pathsep.join([str(self.links), *entries])
        env[GUARD_SOCKET] = self.channel.path
        env[GUARD_TOKEN] = token
        if self.namespaces.usable:
            env[GUARD_REAL] = str(self.real_root)
            env[MOUNT_PLAN_VARIABLE] = self.mount_plan(entries, unreadable, kept).encode()

    def mount_plan(
        self, path_entries: list[str], unreadable: Sequence[str] = (), kept: Sequence[str] = ()
    ) -> MountPlan:
        """The namespaces of a command whose PATH is `path_entries` (see `environment`)."""
        guard_directory = str(self.directory)
        shown = [str(path) for path in shown_to_commands()]
        state = coverable([str(path) for path in kept_out()], (), guard_directory)
        masked = [path for path in state if os.path.isdir(path)]
        hidden = coverable(
            [*credential_paths(), *unreadable, *(p for p in state if p not in masked)], (), guard_directory
        )
        masked = coverable(masked, hidden, guard_directory)
        return MountPlan(
            shim=str(self.shim),
            real_root=str(self.real_root),
            covered=_real_binaries(path_entries),
            hidden=hidden,
            empty_folder=str(self.directory / EMPTY_FOLDER_NAME),
            empty_file=str(self.directory / EMPTY_FILE_NAME),
            own_pids=self.namespaces.own_pids,
            masked=masked,
            kept=[p for p in (*map(os.path.realpath, kept), *shown) if beneath_any(p, masked) and os.path.lexists(p)],
        )

    def close(self) -> None:
        self.channel.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _link_programs(self, path_entries: list[str]) -> None:
        """A link for each guarded program found on PATH, and none for the others, so that `command -v`
        and `which` stay truthful. Checked for every command: PATH and installed tools change."""
        wanted = {name for name in GUARDED_PROGRAMS if _on_path(name, path_entries)}
        with self._links_lock:
            present = set(os.listdir(self.links))
            for name in present - wanted:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.links / name)
            for name in wanted - present:
                with contextlib.suppress(FileExistsError):
                    os.symlink(self.shim, self.links / name)


def _on_path(name: str, entries: Iterable[str]) -> bool:
    for entry in entries:
        candidate = os.path.join(entry or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return True
    return False


def _real_binaries(entries: Iterable[str]) -> list[str]:
    """Every copy of a guarded program on PATH, symlinks resolved: what a namespace covers with the shim."""
    found: list[str] = []
    for entry in entries:
        if not os.path.isabs(entry):
            continue
        for name in GUARDED_PROGRAMS:
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                real = os.path.realpath(candidate)
                if real not in found and "\n" not in real:
                    found.append(real)
    return found


_guard: Guard | None = None
_guard_failure: str | None = None
_guard_lock = threading.Lock()


def process_guard() -> Guard | None:
    """The process's guard, made on first use; None where it cannot be (the reason logged once)."""
    global _guard, _guard_failure
    with _guard_lock:
        if _guard is None and _guard_failure is None:
            try:
                _guard = Guard()
            except OSError as exc:
                _guard_failure = f"off: {exc}"
                logger.warning("infrastructure guard unavailable: %s", exc)
            else:
                atexit.register(_guard.close)
                if _guard.namespaces.usable:
                    logger.info("infrastructure guard: %s", _guard.protection)
                else:  # absolute paths reach the real binaries: worth the user's attention
                    logger.warning("infrastructure guard: %s", _guard.protection)
        return _guard


_checks_token: str | None = None  # one for the process's checks, registered with their first command


def guard_check_environment(
    answer: Decide, env: dict[str, str], unreadable: Sequence[str], kept: Sequence[str]
) -> None:
    """Guard a check's command (its environment made by system.processes.command_environment), its shims
    answered by `answer` (the policy's, given by the start-up through guard/install.py)."""
    global _checks_token
    if (guard := process_guard()) is None:
        return
    if _checks_token is None:
        _checks_token = guard.register(answer)
    guard.environment(env, _checks_token, unreadable, kept)


def guard_status() -> str:
    """One line for /status."""
    guard = process_guard()
    return guard.protection if guard is not None else (_guard_failure or "off")
