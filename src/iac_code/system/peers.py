"""Who is at the other end of a Unix socket: the warm launcher's check of the warm process (warm/peer.py), the
warm child's of its launcher, and the guard's hand-over reading the limits of the shim that asked
(guard/handover.py). Standard library only: the warm launcher imports it on its way to the hand-off."""

from __future__ import annotations

import socket
import struct

_CREDENTIALS = struct.Struct("3i")  # pid, uid, gid


def peer_credentials(sock: socket.socket) -> tuple[int, int] | None:
    """The pid (as this process sees it) and user id at the other end (Linux's SO_PEERCRED), as the kernel
    recorded them when the connection was made: for a connecting end, the process that called listen(), not
    one it forked to accept; for an accepting end, the process that connected. None where they cannot be
    told."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, uid, _ = _CREDENTIALS.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _CREDENTIALS.size))
    except OSError:
        return None
    return int(pid), int(uid)
