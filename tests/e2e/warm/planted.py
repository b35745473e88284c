"""A planted warm socket, as a daemon that outlived its call would plant one: `python planted.py SOCKET RECORD
[LOCK]` puts a listener at SOCKET (bound beside it, then renamed over whatever is there), optionally holds LOCK
with its own pid in it (as the warm process holds its lock), says "listening" on stdout, and plays the warm
process's part for every launch that connects: it answers the launcher's first message with "ready" and takes
the stdio it is given. Each connection's every byte and the number of descriptors that came with them are
appended to RECORD (one JSON line per connection, when it ends) for the test to read.

Standard library only: the test may run it under another interpreter.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import socket
import struct
import sys

_FDS = array.array("i")
_LENGTH = struct.Struct("!I")
QUIET_SECONDS = 5.0  # a launcher silent this long has nothing more to send


def main() -> None:
    path, record = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        hold_lock(sys.argv[3])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{path}.planted")
    listener.listen(8)
    os.replace(f"{path}.planted", path)
    print("listening", flush=True)
    while True:
        connection, _ = listener.accept()
        with connection:
            received, descriptors = take_everything(connection)
        with open(record, "a") as file:
            file.write(json.dumps({"received": received.decode("latin-1"), "descriptors": descriptors}) + "\n")


def hold_lock(path: str) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())


def take_everything(connection: socket.socket) -> tuple[bytes, int]:
    """Read until the launcher ends the connection (or falls silent), answering its first whole message
    with "ready" and ending the connection once it handed over descriptors, as a man in the middle would."""
    connection.settimeout(QUIET_SECONDS)
    received, descriptors, answered = b"", 0, False
    while True:
        try:
            data, ancillary, _, _ = connection.recvmsg(1 << 16, socket.CMSG_SPACE(16 * _FDS.itemsize))
        except TimeoutError:
            return received, descriptors
        received += data
        for level, kind, payload in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS):
                fds = array.array("i", payload[: len(payload) - len(payload) % _FDS.itemsize])
                descriptors += len(fds)
                for fd in fds:
                    os.close(fd)
        if not data or descriptors:
            return received, descriptors
        if not answered and len(received) >= _LENGTH.size + _LENGTH.unpack_from(received)[0]:
            reply = json.dumps({"ready": True}).encode()
            connection.sendall(_LENGTH.pack(len(reply)) + reply)
            answered = True


if __name__ == "__main__":
    main()
