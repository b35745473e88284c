"""Whether the process at the other end of the warm socket is this key's warm process, asked before the
launcher sends it anything (issue 36: a daemon that outlived its call replaced the socket, and every later
launch of that user handed it the API key and its editor's stdio).

The warm process holds `<name>.lock` (a POSIX record lock, its pid written in it) for its whole life and
calls listen() on the socket itself; Linux records the listening process's credentials on the socket and
gives them to every connection made to it (SO_PEERCRED), whichever process accepts: the children it forks
per connection do not change them. So the listener is the warm process when it is this user's, its pid is
the one holding the lock (F_GETLK) and the one the lock names, and it runs the interpreter that this
launcher runs (the key names it). What that cannot tell is written in README.md.
"""

from __future__ import annotations

import os
import socket
import sys

from iac_code.system.peers import peer_credentials
from iac_code.warm.place import lock_holder


def doubt(sock: socket.socket, lock_path: str) -> str | None:
    """Why the listener `sock` is connected to is not this key's warm process; None when it is."""
    credentials = peer_credentials(sock)
    if credentials is None:
        return "the warm socket's listener cannot be told"
    pid, uid = credentials
    if uid != os.getuid():
        return f"the warm socket's listener is user {uid}"
    listens = f"pid {pid} listens on the warm socket"
    holder = lock_holder(lock_path)
    if holder is None:
        return f"{listens}, but no warm process holds its lock"
    if holder != pid:
        return f"{listens}, but pid {holder} holds its lock"
    if _named_pid(lock_path) != pid:
        return f"{listens} and holds its lock, but the lock names another pid"
    interpreter, runs = _runs_this_interpreter(pid)
    if not interpreter:
        return f"pid {pid} runs {runs}, not {sys.executable}"
    return None


def _named_pid(lock_path: str) -> int | None:
    try:
        with open(lock_path, "rb") as file:
            return int(file.read(32))
    except (OSError, ValueError):
        return None


def _runs_this_interpreter(pid: int) -> tuple[bool, str]:
    """Whether `pid` runs the file this launcher's interpreter is (`sys.executable`, which the key names), and
    what the kernel shows it runs."""
    link = f"/proc/{pid}/exe"
    try:
        return os.path.samestat(os.stat(link), os.stat(sys.executable)), os.readlink(link)
    except OSError:
        return False, "an executable this process cannot see"
