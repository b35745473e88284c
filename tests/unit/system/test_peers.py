"""Who is at the other end of a Unix socket."""

from __future__ import annotations

import os
import socket

from iac_code.system.peers import peer_credentials


def test_the_peer_is_this_process_of_this_user():
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert peer_credentials(left) == (os.getpid(), os.getuid())
        assert peer_credentials(right) == (os.getpid(), os.getuid())
