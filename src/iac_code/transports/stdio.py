"""`iac-code acp` over stdio: one JSON-RPC message per line on stdin/stdout, nothing else on stdout."""

from __future__ import annotations

import asyncio
import io
import logging
import selectors
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from iac_code.safe_json import dumps_bytes

if TYPE_CHECKING:
    from acp._transport import Transport

logger = logging.getLogger(__name__)

_READ_CHUNK = 1 << 20  # bytes per read; lines of any length are stitched together


class Server(Protocol):
    """What serves the connection once the SDK has loaded (the start-up module's, serve.py)."""

    def on_idle(self) -> None:
        """Called once, the first time no request is left unanswered (see acp/early.py's Handover)."""
        ...

    async def serve(self, transport: Transport, client_capabilities: Any) -> None:
        """Serve the connection until `transport` ends."""
        ...


class EarlyAnswers(Protocol):
    """What answers while the SDK loads, and hands the connection over to it (the start-up gives acp/early.py's)."""

    client_capabilities: Any  # from an `initialize` answered early

    async def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The response to `message` if it can be given now, else None (the SDK will answer it)."""
        ...

    def handover(
        self, transport: Transport, waiting: list[asyncio.Future[Any]], on_idle: Callable[[], None]
    ) -> Transport:
        """The transport the SDK-served connection reads (`waiting`: receives made while it loaded)."""
        ...


def run_stdio(answers: EarlyAnswers, load_server: Callable[[], Server]) -> int:
    """Serve ACP on stdin/stdout until stdin closes or SIGTERM/SIGINT; 0 on a clean exit.
    `load_server` runs in a thread (it imports the SDK) while `answers` are given."""
    return asyncio.run(_serve_stdio(answers, load_server))


async def _serve_stdio(answers: EarlyAnswers, load_server: Callable[[], Server]) -> int:
    transport = await StdioTransport.open()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, transport.stop)
    # The SDK takes most of a second to load; answer what can be answered meanwhile (see early.py).
    loading = asyncio.ensure_future(asyncio.to_thread(load_server))
    early = await _answer_early_until(loading, transport, answers)
    server = loading.result()
    handover = answers.handover(transport, early, on_idle=server.on_idle)
    await server.serve(handover, answers.client_capabilities)
    return 0


async def _answer_early_until(
    loading: asyncio.Future[Any], transport: StdioTransport, answers: EarlyAnswers
) -> list[asyncio.Future[dict[str, Any] | None]]:
    """Answer what `answers` can until the SDK has loaded or another message comes; return the rest.

    A receive still pending when loading ends is handed over as is, so no line is ever split or lost.
    """
    early: list[asyncio.Future[dict[str, Any] | None]] = []
    while not loading.done():
        receiving = asyncio.ensure_future(transport.receive())
        await asyncio.wait({receiving, loading}, return_when=asyncio.FIRST_COMPLETED)
        if not receiving.done():
            early.append(receiving)
            break
        message = receiving.result()
        response = await answers.answer(message) if message is not None else None
        if response is not None:
            await transport.send(response)
            continue
        early.append(receiving)  # anything else waits for the SDK, and so does all that follows it
        break
    await asyncio.wait({loading})
    return early


class StdioTransport:
    """The SDK Transport over this process's stdin and stdout.

    Malformed input is answered here (-32700 / -32600) and skipped, since the SDK would drop it
    silently. Each message is written with one write() call, so two messages never interleave.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None) -> None:
        self._reader = reader
        self._writer = writer  # None: stdout is a regular file, written directly
        self._stopping = asyncio.Event()
        self._unwritten: list[bytes] = []  # whole lines sent during this loop iteration

    @classmethod
    async def open(cls) -> StdioTransport:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_READ_CHUNK)
        if _pollable(sys.stdin.fileno()):
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        else:  # a regular file or /dev/null: feed it from a thread
            _feed_from_thread(loop, reader)
        try:
            pipe, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
        except ValueError:
            return cls(reader, None)
        return cls(reader, asyncio.StreamWriter(pipe, protocol, None, loop))

    def stop(self) -> None:
        """End the session as if stdin had closed (signal handlers call this)."""
        self._stopping.set()

    async def send(self, message: dict[str, Any]) -> None:
        data = dumps_bytes(message) + b"\n"
        if self._writer is None:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        # Lines sent in one loop iteration (a replay, a burst of updates) leave in one write(): a
        # syscall and a wake-up of the reader per line cost more than the line itself.
        if not self._unwritten:
            asyncio.get_running_loop().call_soon(self._flush)
        self._unwritten.append(data)
        try:
            await self._writer.drain()  # waits only while the pipe's buffer is over its high-water mark
        except ConnectionError:
            self._client_gone()

    async def receive(self) -> dict[str, Any] | None:
        from iac_code.transports.jsonrpc import decode

        while True:
            line = await self._next_line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = decode(line)
            if error is None:
                return message
            logger.warning("bad input: %s", error["error"]["message"])
            await self.send(error)

    async def close(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()

    def _flush(self) -> None:
        if self._unwritten and self._writer is not None and not self._writer.is_closing():
            self._writer.write(b"".join(self._unwritten))
        self._unwritten.clear()

    def _client_gone(self) -> None:
        """Nobody reads stdout any more: end the connection as if stdin had closed."""
        if not self._stopping.is_set():
            logger.warning("stdout is closed: the client is gone; stopping")
            self.stop()

    async def _next_line(self) -> bytes | None:
        reading = asyncio.ensure_future(_read_line(self._reader))
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not reading.done():
            reading.cancel()
            return None
        return reading.result() or None


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        try:
            parts.append(await reader.readuntil(b"\n"))
            return b"".join(parts)
        except asyncio.LimitOverrunError as exc:
            parts.append(await reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:  # EOF: the last line may lack its newline
            parts.append(exc.partial)
            return b"".join(parts)


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch `fd`. epoll refuses regular files and /dev/null; asyncio would
    then log the error from a callback and wait forever for input that never comes."""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    stdin = sys.stdin.buffer
    # read1: what is there now, up to a chunk (a BufferedReader's); another stream is read a chunk at a time.
    read = stdin.read1 if isinstance(stdin, io.BufferedReader) else stdin.read

    def pump() -> None:
        try:
            while chunk := read(_READ_CHUNK):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()
