"""One MCP server's connection, living in a task of its own from start to close.

The SDK's `Client` holds anyio task groups, which must be entered and left by the same task: the
connection task enters it, lists the tools and prompts, marks itself ready, and waits to be told to
stop. Calls come from other tasks (the agent's turns); cancelling one of them makes the SDK send
MCP's `notifications/cancelled` for that request.

A failure at any point (spawn, handshake, tool listing, startup timeout, the server exiting later)
leaves the connection `failed` with a displayable reason, reported once; it never raises out.

A server may change its tools and prompts while it runs: it says so with `notifications/tools/list_changed`
or `notifications/prompts/list_changed` (protocol versions before 2026-07-28), or through a
`subscriptions/listen` stream (2026-07-28, opened when the server advertises `listChanged`). The
connection then lists both again and calls `changed`. A tool call that brought such a change returns once
the new lists are in (bounded by CHANGE_WAIT), so the model's next call already sees them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx2
import mcp_types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

import iac_code
from iac_code.mcp.addresses import Reach
from iac_code.mcp.checked_http import checked_client
from iac_code.mcp.config import HttpServer, StdioServer, describe, safe_url
from iac_code.mcp.elicitation import CANCEL, DECLINE, Unreadable, question_of, result_of
from iac_code.mcp.stdio import StderrTail, stdio_transport
from iac_code.tools.base import ToolError
from iac_code.tools.questions import Elicit

logger = logging.getLogger(__name__)

State = Literal["starting", "ready", "failed", "closed"]
CLOSE_TIMEOUT = 5.0  # bound on a polite shutdown (HTTP session DELETE, stdio grace) before cancelling
MAX_PAGES = 50  # tools/list and prompts/list pages followed; a paginator that never ends cannot hang us
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults: SSE streams stay open for long
CLIENT_INFO = mcp_types.Implementation(name="iac-code", version=iac_code.__version__)
# The SDK's "auto": the 2026-07-28 protocol when the server speaks it, else the initialize handshake
# ("legacy", which tests force to exercise the notifications of earlier servers).
PROTOCOL_MODE: Literal["auto", "legacy"] = "auto"
CHANGE_WAIT = 5.0  # how long a tool call waits for the lists its server just changed
_LIST_CHANGES = (mcp_types.ToolListChangedNotification, mcp_types.PromptListChangedNotification)

Reporter = Callable[["ServerConnection", str], Awaitable[None]]  # it failed: why, for the user
ReadyCallback = Callable[["ServerConnection"], Awaitable[None]]  # ready, or its lists changed since
_Result = TypeVar("_Result")


class ServerConnection:
    def __init__(
        self,
        spec: StdioServer | HttpServer,
        cwd: Path,
        report: Reporter,
        ready: ReadyCallback,
        startup_timeout: float,
        changed: ReadyCallback,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.state: State = "starting"
        self.problem = ""  # why it failed, for the user
        self.tools: list[mcp_types.Tool] = []
        self.prompts: list[mcp_types.Prompt] = []
        self.settled = asyncio.Event()  # ready, failed or closed: no longer starting
        self.stderr = StderrTail()
        self._cwd = cwd
        self._report = report
        self._on_ready = ready
        self._on_changed = changed
        self._lists_changed = asyncio.Event()  # the server said its tools or prompts changed
        self._lists_current = asyncio.Event()  # no change is waiting to be listed
        self._lists_current.set()
        self._startup_timeout = startup_timeout
        self._client: Client | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._exit_code: int | None = None
        self._crashed = False
        # the calls in flight that may ask the user (their ToolContext.elicit), the latest last: a server's
        # elicitation/create is asked within the latest (MCP does not say which call a request serves)
        self._askers: list[_Asker] = []

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp-server:{self.name}")

    async def close(self) -> None:
        """Stop the server (stdio: its process group is killed); waits a bounded time."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        # A polite shutdown (stdin closed, HTTP session deleted), or a crashed server's transport being
        # stopped: bounded. Cancelling would cut that stop short (a task's cancel goes through anyio's shield).
        if self.state != "starting":
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if not task.done():  # still starting: nothing to be polite about
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout: float, elicit: Elicit | None = None
    ) -> mcp_types.CallToolResult:
        """`elicit`: how the server's questions during the call reach the user (None: they are declined)."""
        asker = _Asker(elicit) if elicit is not None else None
        if asker is not None:
            self._askers.append(asker)
        try:
            result = await self._request(f"'{tool}'", lambda client: client.call_tool(tool, arguments), timeout)
        finally:
            if asker is not None:
                self._askers.remove(asker)
                asker.over.set()  # a question still open is cancelled with its call
        if not self._lists_current.is_set():  # the call changed the server's tools: let the model see them
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHANGE_WAIT):
                    await self._lists_current.wait()
        return result

    async def get_prompt(self, prompt: str, arguments: dict[str, str], timeout: float) -> mcp_types.GetPromptResult:
        return await self._request(f"prompt '{prompt}'", lambda client: client.get_prompt(prompt, arguments), timeout)

    async def _request(self, what: str, send: Callable[[Client], Awaitable[_Result]], timeout: float) -> _Result:
        """One request with a deadline; every failure becomes a ToolError the model (or user) can read."""
        client = self._connected()
        try:
            async with asyncio.timeout(timeout):
                return await send(client)
        except TimeoutError:
            raise ToolError(
                f"MCP server '{self.name}' did not answer {what} within {timeout:g} s; the call was cancelled"
            ) from None
        except Exception as exc:
            raise ToolError(f"MCP server '{self.name}' could not run {what}: {self._reason(exc)}") from None

    # -- the connection task ------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                startup = asyncio.timeout(self._startup_timeout)
                try:
                    async with startup:
                        client = await stack.enter_async_context(self._client_for(stack))
                        self.tools = await _listing(client.list_tools, "tools")
                        self.prompts = await self._prompts(client)
                except TimeoutError:
                    if startup.expired():
                        raise _StartupTimeout from None
                    raise
                self._client = client
                self.state = "ready"
                self.settled.set()
                logger.info("MCP server %s ready (%s): %d tools, %d prompts", *self._summary())
                await self._on_ready(self)
                async with _background(self._follow_changes(client)), _background(self._listen(client)):
                    await self._stop.wait()
                self._client = None
                if self._crashed:
                    code = self._exit_code
                    await self._fail("it closed its stdout" if code is None else f"it stopped (exit code {code})")
        except _StartupTimeout:
            await self._fail(f"it did not finish starting within {self._startup_timeout:g} s")
        except Exception as exc:
            await self._fail(self._reason(exc))
        finally:
            self._client = None
            if self.state != "failed":
                self.state = "closed"
            self.settled.set()

    def _client_for(self, stack: contextlib.AsyncExitStack) -> Client:
        spec = self.spec
        transport: Any
        if isinstance(spec, StdioServer):
            transport = stdio_transport(spec, self._cwd, self.stderr, self._exited)
        elif spec.transport == "sse" and spec.reach is not None:
            transport = sse_client(spec.url, headers=dict(spec.headers), httpx_client_factory=_checked(spec.reach))
        elif spec.transport == "sse":
            transport = sse_client(spec.url, headers=dict(spec.headers))
        else:
            http = (
                httpx2.AsyncClient(headers=dict(spec.headers), timeout=HTTP_TIMEOUT)
                if spec.reach is None
                else checked_client(spec.reach, dict(spec.headers), HTTP_TIMEOUT)
            )
            stack.push_async_callback(http.aclose)
            transport = streamable_http_client(spec.url, http_client=http)
        return Client(
            transport,
            client_info=CLIENT_INFO,
            cache=None,
            message_handler=self._on_message,
            elicitation_callback=self._on_elicitation,
            mode=PROTOCOL_MODE,
        )

    async def _on_elicitation(
        self, context: object, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The server asks the user something: within the call in flight, or declined when none may ask."""
        if not self._askers:
            return DECLINE
        try:
            question = question_of(params)
        except Unreadable as exc:
            logger.warning("MCP server %s asked a question a form cannot show (%s): declined", self.name, exc)
            return DECLINE
        asker = self._askers[-1]
        asking = asyncio.ensure_future(asker.elicit(question))
        over = asyncio.ensure_future(asker.over.wait())
        try:
            await asyncio.wait({asking, over}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            over.cancel()
        if not asking.done():  # the call ended (cancelled, timed out) while the user was being asked
            asking.cancel()
            return CANCEL
        return result_of(question, asking.result())

    async def _on_message(self, message: object) -> None:
        """What the server sends outside of requests (the SDK's reader task calls this: it must not block)."""
        if isinstance(message, _LIST_CHANGES):
            self._list_changed()

    def _list_changed(self) -> None:
        self._lists_current.clear()
        self._lists_changed.set()

    async def _listen(self, client: Client) -> None:
        """Open a `subscriptions/listen` stream for the changes the server announces (2026-07-28 only;
        earlier servers send the notifications without being asked)."""
        capabilities = client.server_capabilities
        tools = bool(capabilities.tools and capabilities.tools.list_changed)
        prompts = bool(capabilities.prompts and capabilities.prompts.list_changed)
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (tools or prompts):
            return
        try:
            async with client.listen(tools_list_changed=tools, prompts_list_changed=prompts) as changes:
                async for _ in changes:
                    self._list_changed()
        except Exception as exc:  # the server's tools still work; only their changes go unseen
            logger.warning("MCP server %s: following its list changes failed: %s", self.name, self._reason(exc))

    async def _follow_changes(self, client: Client) -> None:
        """List the tools and prompts again after each announced change, and tell the hub."""
        while True:
            await self._lists_changed.wait()
            self._lists_changed.clear()
            try:
                tools = await _listing(client.list_tools, "tools")
                prompts = await self._prompts(client)
            except Exception as exc:  # keep offering the lists we have
                logger.warning("MCP server %s: listing its tools again failed: %s", self.name, self._reason(exc))
            else:
                self.tools, self.prompts = tools, prompts
                logger.info("MCP server %s changed (%s): %d tools, %d prompts", *self._summary())
                await self._on_changed(self)
            if not self._lists_changed.is_set():
                self._lists_current.set()

    async def _prompts(self, client: Client) -> list[mcp_types.Prompt]:
        if client.server_capabilities.prompts is None:
            return []
        try:
            return await _listing(client.list_prompts, "prompts")
        except MCPError as exc:  # prompts are a bonus: the tools still work
            logger.warning("MCP server %s: listing its prompts failed: %s", self.name, exc)
            return []

    def _exited(self, returncode: int | None) -> None:
        """The stdio server's stdout ended. While ready and not stopping, that is a crash."""
        self._exit_code = returncode
        if self.state == "ready" and not self._stop.is_set():
            self._crashed = True
            self._client = None
            self._stop.set()  # the connection task reports it and cleans up

    async def _fail(self, reason: str) -> None:
        self.state = "failed"
        self._client = None
        self.settled.set()
        if self.problem:  # reported once
            return
        self.problem = reason
        tail = self.stderr.text()
        logger.warning(
            "MCP server %s (%s) is unavailable: %s%s",
            self.name,
            describe(self.spec),
            reason,
            f"\n--- last lines of its stderr:\n{tail}" if tail else "",
        )
        await self._report(self, f"MCP server '{self.name}' is unavailable: {reason}")

    def _connected(self) -> Client:
        if self._client is None:
            why = f" ({self.problem})" if self.problem else ""
            raise ToolError(f"MCP server '{self.name}' is not connected{why}")
        return self._client

    def _reason(self, exc: BaseException) -> str:
        """A one-line, secret-free reason for `exc`."""
        exc = _leaf(exc)
        spec = self.spec
        if isinstance(exc, FileNotFoundError) and isinstance(spec, StdioServer):
            return f"cannot start `{spec.command}`: command not found"
        spawn_failed = isinstance(exc, OSError) and not isinstance(exc, TimeoutError)
        if spawn_failed and isinstance(spec, StdioServer) and self._exit_code is None:
            return f"cannot start `{spec.command}`: {getattr(exc, 'strerror', None) or exc}"
        if self._exit_code is not None and self.state == "starting":
            return f"it exited (code {self._exit_code}) before it was ready"
        text = str(exc) or type(exc).__name__
        if isinstance(exc, MCPError):
            text = f"it answered with an error: {exc.message}"
        elif isinstance(exc, httpx2.HTTPError):
            text = f"{type(exc).__name__}: {text}"
        if isinstance(spec, HttpServer):
            text = text.replace(spec.url, safe_url(spec.url))
        return text.splitlines()[0] if text else type(exc).__name__

    def _summary(self) -> tuple[str, str, int, int]:
        return self.name, describe(self.spec), len(self.tools), len(self.prompts)


class _Asker:
    """A call in flight that may ask the user its server's questions, until it is over."""

    def __init__(self, elicit: Elicit) -> None:
        self.elicit = elicit
        self.over = asyncio.Event()


class _StartupTimeout(Exception):
    pass


def _checked(reach: Reach) -> Callable[..., httpx2.AsyncClient]:
    """The SSE transport's client factory for a shared server's client-sent server."""

    def make(
        headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: Any = None
    ) -> httpx2.AsyncClient:
        return checked_client(reach, headers or {}, timeout or HTTP_TIMEOUT)

    return make


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@contextlib.asynccontextmanager
async def _background(work: Coroutine[Any, Any, None]) -> AsyncIterator[None]:
    """Run `work` in a task for the duration of the block; cancelled when the block ends."""
    task = asyncio.create_task(work)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _listing(fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every page of a tools/list or prompts/list."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            break
    return items
