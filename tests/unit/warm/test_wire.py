"""The hand-off's framing holds against a peer that breaks it."""

from __future__ import annotations

import os
import socket
import struct

import pytest

from iac_code.warm import wire


@pytest.fixture
def pair():
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield left, right
    left.close()
    right.close()


def test_messages_round_trip_with_any_text(pair):
    left, right = pair
    message = {"env": {"A": "é\udcff"}, "argv": ["iac-code", "acp"]}  # a variable that is not UTF-8
    wire.send(left, message)
    assert wire.receive(right) == message
    left.close()
    assert wire.receive(right) is None


@pytest.mark.parametrize(
    "data",
    [
        struct.pack("!I", wire.LIMIT + 1),
        struct.pack("!I", 2) + b"[]",
        struct.pack("!I", 3) + b"{no",
        struct.pack("!I", 10) + b"{}",
        b"\x00\x00",
    ],
    ids=["too-long", "not-an-object", "not-json", "cut-short", "cut-header"],
)
def test_a_broken_message_is_an_error(pair, data):
    left, right = pair
    left.sendall(data)
    left.shutdown(socket.SHUT_WR)
    with pytest.raises(wire.WireError):
        wire.receive(right)


def test_stdio_travels_as_three_descriptors(pair):
    left, right = pair
    wire.send_stdio(left)
    fds = wire.receive_stdio(right)
    try:
        assert len(fds) == 3 and all(os.path.samestat(os.fstat(fd), os.fstat(n)) for n, fd in enumerate(fds))
    finally:
        for fd in fds:
            os.close(fd)


def test_other_descriptors_are_refused_and_closed(pair):
    left, right = pair
    read, write = os.pipe()
    socket.send_fds(left, [b"F"], [read])
    with pytest.raises(wire.WireError):
        wire.receive_stdio(right)
    os.close(read)
    os.close(write)
