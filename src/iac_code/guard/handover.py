"""Handing the cloud credentials to one run: the guard's answer when a shim's run may use them.

Commands run without cloud credentials (system/processes.command_environment withholds the variables, the
mount namespace shows the credential files empty). When the guard lets a guarded CLI's run go ahead and that
run is either a change the user approved (the decision let a changing argv run) or a known read-only form
(infra_commands.is_read_only), the agent runs the real program itself, outside the command's namespaces, with
the credentials it holds, on the shim's own stdin, stdout and stderr (passed over the socket), in the shim's
directory; the shim waits and ends as the run did. So the credentials never enter the command's process tree
where a script could read them, and a run ends when its shim goes (the command killed, the call over).

What the run gets: the agent's own environment (where nothing of the command can point a CLI at code,
configuration or a proxy of the command's choosing), then the command's variables except those that load
code, move configuration, change the connection or name credentials, then the credentials held. The program
is found on the agent's own PATH (absolute entries, never the guard's directory), not the command's.
"""

from __future__ import annotations

import logging
import os
import resource
import select
import shutil
import socket
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from iac_code.cloud_credentials import (
    SELECTOR_VARIABLES,
    credential_paths,
    is_credential_variable,
    without_credentials,
)
from iac_code.credentials import held_cloud_credentials, without_secrets
from iac_code.guard.channel import ShimRequest
from iac_code.guard.shim import GUARD_TOKEN
from iac_code.infra_commands import GUARDED_PROGRAMS, changes_argv, read_only_form
from iac_code.system.peers import peer_credentials
from iac_code.system.processes import REAPER_GRACE, Child, contained, start, stop_group
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

logger = logging.getLogger(__name__)

# The command's variables a handed run never takes: they load code into the CLI or what it runs, or move its
# configuration, connection or trust elsewhere. The agent's own values stand instead.
UNSAFE_PREFIXES = ("LD_", "DYLD_", "PYTHON", "NODE_", "NPM_CONFIG_", "RUBY", "PERL", "BASH_FUNC_", "GIT_", "GCONV_")
UNSAFE_VARIABLES = frozenset(
    {
        "HOME",
        "PATH",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GOFLAGS",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "TF_PLUGIN_CACHE_DIR",
        MOUNT_PLAN_VARIABLE,
    }
)
WATCH_INTERVAL = 0.05  # seconds: how often a run looks whether its shim is still there


class HandOver:
    """Runs the real program with the credentials, for the shims whose run warrants them."""

    def __init__(self, guard_directory: Path, links: Path) -> None:
        self._guard_directory = str(guard_directory)
        self._links = str(links)  # first on a run's PATH: what the run starts meets the shims too
        self._runs: dict[str, set[Child]] = {}
        self._lock = threading.Lock()

    def warranted(self, request: ShimRequest) -> bool:
        """Whether this run, which the decision let go ahead, gets the credentials: an approved change or a
        known read-only form of a guarded CLI, when there are credentials to give. The reads that run the
        workspace's code (`terraform plan`, `pulumi preview`) get them too: a plan against the real state is
        what iac_plan and a user's plan are for, and that code went through the agent's own questions."""
        if request.program not in GUARDED_PROGRAMS:
            return False
        if not held_cloud_credentials() and not credential_paths():
            return False  # nothing to hand over: the run goes ahead in the command's namespace
        return changes_argv(request.argv, request.env) or read_only_form(request.argv, request.env) is not None

    def run(self, token: str, request: ShimRequest, stdio: Sequence[int], shim: socket.socket) -> bytes:
        """Run `request` on the shim's `stdio` with the credentials until it ends or the shim's socket closes;
        the answer for the shim: `exit:N`, `signal:N` or `refuse:WHY`."""
        program = self._real_program(request.program)
        if program is None:
            return b"refuse:command not found on the agent's PATH"
        limits = _limits_of(shim)  # the command's own (iac_check's memory and CPU bounds)
        try:
            process = start(
                contained(program, *request.args),
                stdin=stdio[0],
                stdout=stdio[1],
                stderr=stdio[2],
                cwd=request.cwd,
                # Not command_environment: the agent's own environment and the credentials (handed_environment).
                env={
                    **handed_environment(request.env, os.environ, held_cloud_credentials(), self._links),
                    GUARD_TOKEN: token,  # what the run starts meets the shims, answered as the command's
                },
                preexec_fn=lambda: _apply(limits),
            )
        except OSError as exc:  # StartFailed among them: the command's limits could not be applied
            return f"refuse:{program} could not start: {getattr(exc, 'strerror', None) or exc}".encode()
        logger.info("guard: %s ran with the cloud credentials", request.program)
        with self._lock:
            self._runs.setdefault(token, set()).add(process)
        try:
            if not _until_exit_or_hang_up(process, shim):
                stop_group(process, REAPER_GRACE)  # the reaper ends what the run left
        finally:
            with self._lock:
                self._runs.get(token, set()).discard(process)
        code = process.returncode
        return f"signal:{-code}".encode() if code < 0 else f"exit:{code}".encode()

    def end_runs(self, token: str) -> None:
        """The call of `token` is over: what still runs for it is ended."""
        with self._lock:
            running = list(self._runs.pop(token, ()))
        for process in running:
            stop_group(process, REAPER_GRACE)

    def _real_program(self, name: str) -> str | None:
        """`name` on the agent's own PATH: absolute entries only, the guard's directory never."""
        entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
        trusted = [entry for entry in entries if os.path.isabs(entry) and not entry.startswith(self._guard_directory)]
        return shutil.which(name, path=os.pathsep.join(trusted)) if trusted else None


def handed_environment(
    command: Mapping[str, str], agent: Mapping[str, str], credentials: Mapping[str, str], links: str
) -> dict[str, str]:
    """The environment of a handed run: the agent's, the command's safe variables over it, the credentials,
    and the shims' directory first on the agent's PATH."""
    env = without_credentials(without_secrets(agent))
    env.update(credentials)
    env.update({name: value for name, value in command.items() if _taken_from_the_command(name)})
    env["PATH"] = os.pathsep.join([links, env.get("PATH", os.defpath)])
    return env


def _taken_from_the_command(name: str) -> bool:
    if name in SELECTOR_VARIABLES:  # which of the user's profiles, regions, projects: the line's choice
        return True
    return not (name in UNSAFE_VARIABLES or name.startswith(UNSAFE_PREFIXES) or is_credential_variable(name))


# The resource limits a handed run keeps from the command that asked for it.
HANDED_LIMITS = (
    resource.RLIMIT_AS,
    resource.RLIMIT_DATA,
    resource.RLIMIT_CPU,
    resource.RLIMIT_FSIZE,
    resource.RLIMIT_NOFILE,
    resource.RLIMIT_NPROC,
    resource.RLIMIT_CORE,
)


def _limits_of(shim: socket.socket) -> list[tuple[int, tuple[int, int]]]:
    """The resource limits of the shim at the other end of `shim` (none readable: none kept, the run gets
    the agent's)."""
    peer = peer_credentials(shim)
    if peer is None:
        return []
    pid, _ = peer
    limits = []
    for limit in HANDED_LIMITS:
        try:
            limits.append((limit, resource.prlimit(pid, limit)))
        except (OSError, ValueError):
            continue
    return limits


def _apply(limits: list[tuple[int, tuple[int, int]]]) -> None:
    """In the handed run's process, before exec: the command's limits (only lowering, never raising)."""
    for limit, (soft, hard) in limits:
        hard = _lower(hard, resource.getrlimit(limit)[1])
        resource.setrlimit(limit, (_lower(soft, hard), hard))


def _lower(a: int, b: int) -> int:
    if a == resource.RLIM_INFINITY:
        return b
    if b == resource.RLIM_INFINITY:
        return a
    return min(a, b)


def _until_exit_or_hang_up(process: Child, shim: socket.socket) -> bool:
    """Wait for the run; False as soon as the shim's socket is closed (the shim is gone)."""
    watch = select.poll()
    watch.register(shim, select.POLLHUP)  # (the shim shut its sending side already: only a close counts)
    try:
        exited = os.pidfd_open(process.pid)  # readable once the run exits: no polling interval to wait out
    except (OSError, AttributeError):  # before Linux 5.3
        exited = None
    try:
        if exited is not None:
            watch.register(exited, select.POLLIN)
        while process.poll() is None:
            events = watch.poll(WATCH_INTERVAL * 1000)
            if any(descriptor == shim.fileno() for descriptor, _ in events):
                return False
        return True
    finally:
        if exited is not None:
            os.close(exited)
