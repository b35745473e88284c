"""Run one command so that nothing it starts outlives it. shell.py (bash commands) and mcp/stdio.py
(stdio MCP servers) run this file as a script:

    python -I -S reaper.py AGENT_PID PROGRAM [ARGS...]

(AGENT_PID 0: started by someone else on the agent's behalf, the editor's terminal: no parent to check.)

A command can leave processes behind that its process group does not hold: `setsid cmd`, daemons
that double-fork. So this process makes itself a *child subreaper* (prctl PR_SET_CHILD_SUBREAPER):
every orphan among the command's descendants is re-parented here instead of to init, so all of them
stay in this process's tree, where they can be found and ended. That happens when

- the command exits: what it left running gets SIGTERM, then SIGKILL after a grace;
- this process gets SIGTERM, SIGINT or SIGHUP (the agent's timeout, a cancelled turn, a stopped server);
- the agent dies, even by SIGKILL: PR_SET_PDEATHSIG turns its death into our SIGTERM.

The command inherits this process's stdin, stdout and stderr, which this process never reads or
writes (an MCP server's JSON-RPC goes through them); it lets go of its own stdin and stdout once the
command has started. It then exits as the command did (same code, or killed by the same signal).
When the environment holds MOUNT_PLAN_VARIABLE (guard/namespace.py), the command runs in a mount namespace
of its own where the cloud credentials' files (and the paths Read rules deny) show empty, the agent's own
folders (its config dir) show as an empty tmpfs but for the paths the plan keeps in them (a plan file being
written, an apply's private copy: bound back from a descriptor opened before the tmpfs covered them), and the
shim of the infrastructure guard covers each real binary the plan lists; with `pids` in the plan, also in a
PID namespace of its own, under a small init of ours (pid 1 there, with a /proc that shows only that
namespace): when the command ends, the init exits and the kernel kills whatever is left in the namespace,
whatever it did to escape (`setsid`, double forks, `kill -9 $PPID`: the init cannot be killed from inside).
The variable is removed first, and a command that cannot be covered does not run (exit 126).

Standard library only, and no import of iac_code: it starts with `-I -S` to cost a few milliseconds.
Linux only; elsewhere it still runs the command and ends what is left of its tree as far as /proc
shows it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE = 0.3  # seconds between SIGTERM and SIGKILL for what the command left running
GIVE_UP = 3.0  # a process stuck in the kernel (state D) ignores even SIGKILL for a while
POLL = 0.01
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
MOUNT_PLAN_VARIABLE = "IAC_CODE_GUARD_MOUNTS"
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x1000, 0x4000, 0x40000
MASK_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC
GUARD_FAILED = 126
# Python ignores these at start-up; a command must not inherit that.
RESTORED_SIGNALS = (*STOP_SIGNALS, signal.SIGPIPE, signal.SIGXFSZ)


class _Stop(Exception):
    """The agent wants the command ended, or is gone."""


def main(argv: list[str]) -> None:
    agent_pid, command = int(argv[1]), argv[2:]
    mount_plan = os.environ.pop(MOUNT_PLAN_VARIABLE, None)
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_stop)
    status: int | None = None
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if agent_pid and os.getppid() != agent_pid:  # the agent died before PR_SET_PDEATHSIG took effect
            raise _Stop
        child = _start(command, mount_plan)
        _let_go_of_input_and_output()
        status = _wait_for(child)
    except _Stop:
        pass
    for signum in STOP_SIGNALS:  # nothing may interrupt the sweep now
        signal.signal(signum, signal.SIG_IGN)
    _end_descendants()
    _exit_like(status)


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no subreaper, no death signal
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _start(command: list[str], mount_plan: str | None) -> int:
    """Fork and exec the command in this process group (the agent's killpg reaches it directly), in its
    own namespaces when there is a plan."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # no _Stop may be raised in the child
    pid = os.fork()
    if pid == 0:
        try:
            for signum in RESTORED_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            if mount_plan is not None:
                _run_guarded(command, mount_plan.split("\n"))
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"{command[0]}: {exc.strerror}\n".encode())
        finally:
            os._exit(127)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    return pid


def _run_guarded(command: list[str], plan: list[str]) -> None:
    """In the forked child: enter the plan's namespaces and mounts, then exec the command (or, with a PID
    namespace, run it under our init). Returns only to report an exec failure; a plan that fails stops here."""
    own_pids, shim, real_root, empty_folder, empty_file, *entries = plan
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        _unshare(libc, CLONE_NEWNS | (CLONE_NEWPID if own_pids == "pids" else 0))
        _mount(libc, "none", "/", MS_REC | MS_PRIVATE)  # nothing below may reach the agent's namespace
        kept = {entry[1:]: os.open(entry[1:], os.O_PATH | os.O_CLOEXEC) for entry in entries if entry[0] == "k"}
        for entry in entries:  # first, so that the view under the real root shows them empty too
            if entry.startswith("h"):
                hidden = entry[1:]
                _mount(libc, empty_folder if os.path.isdir(hidden) else empty_file, hidden, MS_BIND)
            elif entry.startswith("m"):
                _mount(libc, "tmpfs", entry[1:], MASK_FLAGS, "tmpfs")
        for path, descriptor in kept.items():
            _keep(libc, path, descriptor)
        _mount(libc, "/", real_root, MS_BIND | MS_REC)
        for entry in entries:
            if entry.startswith("c"):
                _mount(libc, shim, entry[1:], MS_BIND)
    except OSError as exc:
        _guard_failed(exc)
    if own_pids == "pids":
        _run_under_init(command, libc, real_root)
    os.execvp(command[0], command)


def _keep(libc: ctypes.CDLL, path: str, descriptor: int) -> None:
    """Bind the file or folder `descriptor` (opened before a tmpfs covered it) back at `path`, making the
    mount point in the tmpfs first."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if os.path.isdir(f"/proc/self/fd/{descriptor}"):
        os.makedirs(path, mode=0o700, exist_ok=True)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    _mount(libc, f"/proc/self/fd/{descriptor}", path, MS_BIND)
    os.close(descriptor)


def _unshare(libc: ctypes.CDLL, flags: int) -> None:
    if os.geteuid() == 0:
        _check(libc.unshare(flags), "unshare")
        return
    # A user namespace of our own gives the right to mount; our ids map to themselves.
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(CLONE_NEWUSER | flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as map_file:
            map_file.write(text)


def _run_under_init(command: list[str], libc: ctypes.CDLL, real_root: str) -> None:
    """Fork the namespace's init (pid 1 there), which mounts the namespace's own /proc (also over the real
    root's copy: no path may lead to the agent's processes and their views) and runs the command as its child.
    The init passes the command's wait status back through a pipe (a namespace's init cannot die by a signal
    of its own), and this process ends as the command did."""
    status_read, status_write = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(status_read)
        try:
            for target in ("/proc", real_root + "/proc"):
                _mount(libc, "proc", target, MS_NOSUID | MS_NODEV | MS_NOEXEC, "proc")
        except OSError as exc:
            _guard_failed(exc)
        child = os.fork()
        if child == 0:
            os.close(status_write)
            try:
                os.execvp(command[0], command)
            except OSError as exc:
                os.write(2, f"{command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
        while True:  # orphans of the namespace are re-parented here: reaped on the way
            pid, status = os.wait()
            if pid == child:
                os.write(status_write, str(status).encode())
                os._exit(0)
    os.close(status_write)
    _, init_status = os.waitpid(init, 0)
    relayed = os.read(status_read, 32)
    _exit_like(int(relayed) if relayed else init_status)


def _guard_failed(exc: OSError) -> None:
    os.write(2, f"iac-code: the infrastructure guard could not cover this command: {exc}\n".encode())
    os._exit(GUARD_FAILED)


def _mount(libc: ctypes.CDLL, source: str, target: str, flags: int, kind: str | None = None) -> None:
    kind_name = None if kind is None else kind.encode()
    _check(libc.mount(os.fsencode(source), os.fsencode(target), kind_name, flags, None), f"mount {target}")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _let_go_of_input_and_output() -> None:
    """Point our stdin and stdout at /dev/null: the command's reader must see the end of its output
    when the command closes it, and its writer a broken pipe when the command stops reading, not when
    we exit. Our stderr stays: it is where anything we would say goes."""
    with contextlib.suppress(OSError):  # no /dev/null (a bare sandbox): they end when we do, as before
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)


def _wait_for(child: int) -> int:
    """The command's wait status. Orphans re-parented here that exit meanwhile are reaped on the way."""
    while True:
        pid, status = os.wait()
        if pid == child:
            return status


def _end_descendants() -> None:
    if not _descendants():
        return
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while _descendants() and time.monotonic() < deadline:
        time.sleep(POLL)
    deadline = time.monotonic() + GIVE_UP
    while _descendants() and time.monotonic() < deadline:  # again and again: they may still be forking
        _signal_all(signal.SIGKILL)
        time.sleep(POLL)


def _signal_all(signum: int) -> None:
    # A pid read from /proc could be reused before the kill only after the whole pid space wrapped.
    for pid in _descendants():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _descendants() -> list[int]:
    """This process's live descendants, after reaping its own exited children."""
    _reap()
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat_file:
                stat = stat_file.read()
        except OSError:  # it ended meanwhile
            continue
        state, parent = stat[stat.rindex(b")") + 2 :].split()[:2]
        children.setdefault(int(parent), []).append(int(name))
        if state == b"Z":
            zombies.add(int(name))
    found: list[int] = []
    pending = list(children.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        if pid not in zombies:
            found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _exit_like(status: int | None) -> None:
    if status is None:  # stopped by the agent, which does not read the status
        os._exit(128 + signal.SIGTERM)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the command's crash, not a dump of ours
        with contextlib.suppress(OSError, ValueError):  # SIGKILL cannot be handled, so needs no reset
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal whose default is not to terminate
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main(sys.argv)
