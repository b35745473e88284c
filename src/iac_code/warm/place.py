"""Where a warm process listens, and the key that says whether its children would behave exactly as
this launch would in-process. Standard library only, and cheap: the launcher runs this before anything
heavy is imported (~2 ms, see bench/startup.py)."""

from __future__ import annotations

import os
import stat
import struct
import sys
import zlib
from collections.abc import Mapping


def startup_variable(name: str) -> bool:
    """An environment variable read while the interpreter starts (encodings, hash seed, flags): a warm
    process started under other values would differ in ways a child cannot undo. The key holds these,
    and the warm process is started with them, so both sides of the key see the same ones."""
    return name.startswith(("PYTHON", "LC_")) or name == "LANG"


def runtime_dir(env: Mapping[str, str]) -> str | None:
    """The user's private directory of warm sockets, made 0700 if missing: `$XDG_RUNTIME_DIR/iac-code`,
    else `iac-code-<uid>` in the temporary directory. None when it is not private (another owner, other
    permissions, not a directory): then nobody hands off."""
    base = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(base):
        path = os.path.join(base, "iac-code")
    else:
        temp = env.get("TMPDIR", "")
        path = os.path.join(temp if os.path.isabs(temp) else "/tmp", f"iac-code-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # the umask may have taken bits away
    except FileExistsError:
        pass
    except OSError:
        return None
    return path if private_dir(path) else None


def private_dir(path: str) -> bool:
    """A real directory (not a symlink), owned by this user, that nobody else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700


def key_material(env: Mapping[str, str]) -> str:
    """What must be equal between a launch and the warm process: the version, the interpreter, its
    flags and start-up variables, the import path and when each of its directories last changed (a
    package installed or removed), every file of the installed iac_code (an edit, a new install), and
    the confinement a child inherits from the warm process rather than from its launcher: namespaces
    (a sandboxed editor's launch must not be served outside its sandbox), control group, resource
    limits, priority and CPUs."""
    import iac_code

    package = os.path.dirname(iac_code.__file__)
    flags = sys.flags
    parts = [
        iac_code.__version__,
        sys.executable,
        sys.version,
        repr((flags.optimize, flags.isolated, flags.ignore_environment, flags.no_user_site, flags.utf8_mode)),
        repr((flags.dev_mode, flags.dont_write_bytecode, flags.bytes_warning, sys.warnoptions)),
        repr(sorted((name, value) for name, value in env.items() if startup_variable(name))),
        repr(sys.path),
        repr([_changed(entry) for entry in sys.path]),
        package,
        repr(_files(package)),
        repr(_confinement()),
    ]
    return "\n".join(parts)


def try_lock(path: str) -> int | None:
    """The key's lock file, opened and locked (exclusive, without waiting); None when another holds it
    (a warm process running or starting) or it cannot be opened. A POSIX record lock, not flock(): its
    holder's pid can be asked (lock_holder), and the children the warm process forks do not hold it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


# Linux's struct flock (l_type, l_whence, l_start, l_len, l_pid), with room for the padding C adds at its end.
_FLOCK = struct.Struct("hhqqi")
_FLOCK_ROOM = 16


def lock_holder(path: str) -> int | None:
    """The pid of the process holding the key's lock (fcntl F_GETLK, which neither takes nor waits for it);
    None when nobody holds it, or it cannot be told. Never this process: its own lock does not conflict."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        query = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0) + bytes(_FLOCK_ROOM)
        kind, _, _, _, pid = _FLOCK.unpack_from(fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except OSError:
        return None
    finally:
        os.close(fd)
    return pid if kind != fcntl.F_UNLCK and pid > 0 else None


# A Unix socket's address holds 107 bytes; the warm process first binds "<socket>.<pid>" (server._listen), and a
# pid has at most 7 digits (Linux's pid_max is at most 2**22).
_SOCKET_PATH_BYTES = 107 - len(".4194304")


def socket_path(directory: str, name: str) -> str | None:
    """The warm socket NAME.sock in DIRECTORY; None when its path is too long for a Unix socket (a deep
    XDG_RUNTIME_DIR): then nobody hands off, and no warm process is started only to fail."""
    path = os.path.join(directory, f"{name}.sock")
    return path if len(os.fsencode(path)) <= _SOCKET_PATH_BYTES else None


def socket_name(material: str) -> str:
    """The socket of the warm process for this key: another version or install is another socket (the
    name only routes; the hand-off compares the whole key)."""
    return f"warm-{zlib.crc32(material.encode('utf-8', 'surrogateescape')):08x}"


def _confinement() -> list[object]:
    import resource

    found: list[object] = []
    for kind in ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts"):
        try:
            found.append(os.readlink(f"/proc/self/ns/{kind}"))
        except OSError:
            found.append(None)
    try:
        with open("/proc/self/cgroup", "rb") as file:
            found.append(file.read())
    except OSError:
        found.append(None)
    found.extend((os.nice(0), sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None))
    limits = sorted(name for name in dir(resource) if name.startswith("RLIMIT_"))
    found.extend((name, resource.getrlimit(getattr(resource, name))) for name in limits)
    return found


def _changed(path: str) -> int:
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return 0


def _files(top: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime) of every file under `top` but the bytecode caches, in a fixed order."""
    found: list[tuple[str, int, int]] = []
    directories = [top]
    while directories:
        with os.scandir(directories.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        directories.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
                found.append((entry.path, info.st_size, info.st_mtime_ns))
    found.sort()
    return found
