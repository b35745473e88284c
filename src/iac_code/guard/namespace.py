"""Mount namespaces: where Linux lets us, each command runs in its own, where every real guarded binary's
path (`/usr/local/bin/terraform`, the copies on PATH, symlinks resolved) shows the shim instead, so that an
absolute path or a glob (`/usr/local/bin/terrafor? apply`) meets the guard too. The original file system
stays visible under the guard's private directory (`real/`), where the shim finds the real binary.

The binding happens in the command's process between fork and exec (system/reaper.py, told what to bind by
the environment variable MOUNT_PLAN_VARIABLE, which it removes). As root, a new mount namespace; otherwise
a new user namespace mapping our own uid and gid, with a mount namespace in it. Probed once per process by
running that very code on a file of the guard's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iac_code.system.processes import contained
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class NamespaceSupport:
    usable: bool
    why_not: str = ""


def mount_plan(shim: str, real_root: str, binaries: Sequence[str]) -> str:
    """What the reaper binds, one path a line: the shim, where the real file system stays, then each binary."""
    return "\n".join([shim, real_root, *binaries])


def probe_namespaces(directory: Path) -> NamespaceSupport:
    """Whether a command can run with a binary covered by the shim here, tried once for real."""
    if not sys.platform.startswith("linux"):
        return NamespaceSupport(False, "mount namespaces are Linux only")
    if not sys.executable:
        return NamespaceSupport(False, "no Python interpreter to run the reaper with")
    probe = directory / "probe"
    probe.mkdir(mode=0o700)
    try:
        target, cover, real_root = probe / "target", probe / "cover", probe / "real"
        target.write_text("real")
        cover.write_text("shim")
        real_root.mkdir()
        kept = str(real_root) + str(target)
        read_both = f"import sys; sys.stdout.write(open({str(target)!r}).read() + open({kept!r}).read())"
        env = {**os.environ, MOUNT_PLAN_VARIABLE: mount_plan(str(cover), str(real_root), [str(target)])}
        try:
            done = subprocess.run(
                contained(sys.executable, "-I", "-S", "-c", read_both),
                env=env,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return NamespaceSupport(False, f"the namespace probe failed ({exc})")
        if done.stdout == b"shimreal":
            return NamespaceSupport(True)
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return NamespaceSupport(False, said[-1] if said else "mount namespaces are not available here")
    finally:
        shutil.rmtree(probe, ignore_errors=True)
