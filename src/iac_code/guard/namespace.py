"""Namespaces: where Linux lets us, each command runs in a mount namespace of its own, where the cloud
credentials' files and folders (cloud_credentials.CREDENTIAL_PATHS) show empty and every real guarded binary's
path (`/usr/local/bin/terraform`, the copies on PATH, symlinks resolved) shows the shim instead, so that an
absolute path or a glob (`/usr/local/bin/terrafor? apply`) meets the guard too. The original file system
stays visible under the guard's private directory (`real/`, credentials hidden there as well), where the shim
finds the real binary. Where a PID namespace can be had too, the command runs in one under an init of the
reaper's, so nothing it starts outlives it and no path under /proc leads to the agent's processes.

The binding happens in the command's process between fork and exec (system/reaper.py, told what to bind by
the environment variable MOUNT_PLAN_VARIABLE, which it removes). As root, a new mount namespace; otherwise
a new user namespace mapping our own uid and gid, with a mount namespace in it. Probed once per process by
running that very code on a file of the guard's own.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iac_code.system.processes import command_environment, contained, run
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class NamespaceSupport:
    usable: bool
    why_not: str = ""
    own_pids: bool = False  # each command also in a PID namespace of its own (see system/reaper.py)
    why_no_pids: str = ""


@dataclass(frozen=True)
class MountPlan:
    """What the reaper does for one command: `hidden` (the cloud credentials' files and folders, the paths Read
    rules deny) shown empty (bound over by `empty_folder` or `empty_file`), each `masked` folder (the agent's
    own state) covered by an empty tmpfs but for the `kept` paths inside it, the whole file system kept under
    `real_root`, the `shim` bound over every `covered` binary; with `own_pids`, a PID namespace and its own
    /proc."""

    shim: str
    real_root: str
    covered: Sequence[str]
    hidden: Sequence[str] = ()
    empty_folder: str = ""
    empty_file: str = ""
    own_pids: bool = False
    masked: Sequence[str] = ()
    kept: Sequence[str] = ()

    def encode(self) -> str:
        """The reaper's MOUNT_PLAN_VARIABLE: one path a line, a covered binary marked `c`, a hidden path `h`, a
        masked folder `m`, a kept path `k`."""
        head = ["pids" if self.own_pids else "-", self.shim, self.real_root, self.empty_folder, self.empty_file]
        marked = [("c", self.covered), ("h", self.hidden), ("m", self.masked), ("k", self.kept)]
        return "\n".join([*head, *(f"{mark}{path}" for mark, paths in marked for path in paths)])


def coverable(paths: Sequence[str], over: Sequence[str], guard_directory: str) -> list[str]:
    """The existing `paths` a namespace can cover: not beneath one of `over` (covered already, and a mount
    point beneath it no longer exists), not holding the guard's own directory (the shim and the empty
    folder must stay reachable), without repeats."""
    found: list[str] = []
    for path in paths:
        if "\n" in path or not os.path.isabs(path) or not os.path.lexists(path):
            continue
        if path in found or beneath_any(path, over) or beneath_any(guard_directory, [path]):
            continue
        found.append(path)
    return [path for path in found if not beneath_any(path, [other for other in found if other != path])]


def beneath_any(path: str, folders: Sequence[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def probe_namespaces(directory: Path) -> NamespaceSupport:
    """Whether a command can run with a binary covered by the shim here (and in a PID namespace of its own),
    tried once for real."""
    if not sys.platform.startswith("linux"):
        return NamespaceSupport(False, "mount namespaces are Linux only")
    if not sys.executable:
        return NamespaceSupport(False, "no Python interpreter to run the reaper with")
    with_pids = _probe(directory, own_pids=True)
    if with_pids is None:
        return NamespaceSupport(True, own_pids=True)
    without_pids = _probe(directory, own_pids=False)
    if without_pids is None:
        return NamespaceSupport(True, own_pids=False, why_no_pids=with_pids)
    return NamespaceSupport(False, without_pids, why_no_pids=with_pids)


def _probe(directory: Path, own_pids: bool) -> str | None:
    """None when a command ran as planned (the binary covered, the original kept, pid 2 with its own pids),
    else what went wrong."""
    probe = directory / "probe"
    probe.mkdir(mode=0o700)
    try:
        target, cover, real_root = probe / "target", probe / "cover", probe / "real"
        target.write_text("real")
        cover.write_text("shim")
        real_root.mkdir()
        kept = str(real_root) + str(target)
        read_both = (
            f"import os, sys; sys.stdout.write(open({str(target)!r}).read() + open({kept!r}).read() + str(os.getpid()))"
        )
        plan = MountPlan(str(cover), str(real_root), [str(target)], own_pids=own_pids)
        # Unguarded: the probe is how the guard learns what it can do; nothing of it runs a guarded CLI.
        env = {**command_environment(guarded=False), MOUNT_PLAN_VARIABLE: plan.encode()}
        try:
            done = run(contained(sys.executable, "-I", "-S", "-c", read_both), env=env, timeout=PROBE_TIMEOUT)
        except OSError as exc:  # TimeoutError among them
            return f"the namespace probe failed ({exc})"
        if done.stdout.startswith(b"shimreal") and (done.stdout == b"shimreal2" or not own_pids):
            return None
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else "namespaces are not available here"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
