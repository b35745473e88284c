"""McpHub: one session's MCP servers, connected in the background, offered as tools and prompts.

    hub = McpHub(server_specs(settings, params.mcp_servers), cwd, on_problem=tell_client)
    hub.start()                      # returns at once; servers connect in parallel
    await hub.wait_ready(5)          # before a turn: a bounded wait for servers still starting
    tools = hub.tools()              # the ready servers' tools, as iac_code Tools
    commands = hub.prompts()         # their prompts, as slash-command descriptors
    text = await hub.render_prompt("mcp__tf__review", "aws_s3_bucket.logs")
    await hub.aclose()               # every server stopped, stdio process groups killed

Nothing here raises because of a server: a server that cannot be used is reported once through
`on_problem(server_name, message)` and left out. `on_change()` is called whenever the tools and
prompts on offer change (a server became ready, a ready one stopped, or one announced that its lists
changed): the time to send the client a new `available_commands_update`. Both callbacks may be plain
functions or coroutine functions.

Importing the MCP SDK costs about half a second, so this module does not: the first hub loads it in
a worker thread from its background task, and a process without MCP servers never loads it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from iac_code.config import Settings
from iac_code.mcp.config import HttpServer, InvalidServer, ServerSpec, StdioServer, server_specs
from iac_code.mcp.naming import qualified_names, server_parts
from iac_code.mcp.prompts import PromptCommand, PromptError, RenderedPrompt, prompt_command, render
from iac_code.tools.base import Tool, ToolError

if TYPE_CHECKING:
    from iac_code.mcp.connection import ServerConnection
    from iac_code.mcp.tool import McpTool

logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 120.0
DEFAULT_STARTUP_TIMEOUT = 60.0  # a server still not ready after this is given up
FIRST_TURN_WAIT = 5.0  # how long a session's first prompt waits for servers still starting
ProblemCallback = Callable[[str, str], Awaitable[None] | None]
ChangeCallback = Callable[[], Awaitable[None] | None]


class McpHub:
    def __init__(
        self,
        servers: Sequence[ServerSpec],
        cwd: Path | str,
        *,
        on_problem: ProblemCallback | None = None,
        on_change: ChangeCallback | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        self._parts = server_parts(spec.name for spec in servers)
        self._servers = [spec for spec in servers if isinstance(spec, StdioServer | HttpServer)]
        self._invalid = [spec for spec in servers if isinstance(spec, InvalidServer)]
        self._cwd = Path(cwd)
        self._on_problem = on_problem
        self._on_change = on_change
        self._offered: set[str] = set()  # servers announced ready through on_change
        self._call_timeout = call_timeout
        self._startup_timeout = startup_timeout
        self._connections: list[ServerConnection] = []  # once the SDK is loaded
        self._tool_class: type[McpTool] | None = None
        self._tools: dict[str, list[McpTool]] = {}  # by server, built once it is ready
        self._launch: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    def start(self) -> None:
        """Start connecting every server in background tasks; returns at once and never raises."""
        if self._launch is not None or self._closed:
            return
        self._launch = asyncio.ensure_future(self._connect_all())
        for spec in self._invalid:
            self._in_background(self._report(spec.name, f"MCP server '{spec.name}' is not usable: {spec.problem}"))

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for servers still starting; True when none is left starting."""
        deadline = asyncio.get_running_loop().time() + timeout
        if self._launch is not None and not self._launch.done():
            await asyncio.wait({self._launch}, timeout=timeout)
            if not self._launch.done():
                return False
        pending = [asyncio.ensure_future(c.settled.wait()) for c in self._connections if not c.settled.is_set()]
        if not pending:
            return True
        _, still = await asyncio.wait(pending, timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
        for waiter in still:
            waiter.cancel()
        return not still

    def tools(self) -> list[Tool]:
        """The tools of every server ready now, in configuration order."""
        tools: list[Tool] = []
        for connection in self._ready():
            if connection.name not in self._tools:
                assert self._tool_class is not None  # loaded with the connections
                names = qualified_names(self._parts[connection.name], [t.name for t in connection.tools])
                self._tools[connection.name] = [
                    self._tool_class(names[t.name], connection, t, self._call_timeout) for t in connection.tools
                ]
            tools.extend(self._tools[connection.name])
        return tools

    def prompts(self) -> list[PromptCommand]:
        """The prompts of every server ready now, as slash commands."""
        commands: list[PromptCommand] = []
        for connection in self._ready():
            names = qualified_names(self._parts[connection.name], [p.name for p in connection.prompts])
            commands.extend(prompt_command(names[p.name], connection.name, p) for p in connection.prompts)
        return commands

    async def render_prompt(self, name: str, args: str = "") -> RenderedPrompt:
        """The user message of prompt command `name` (without "/") given the text typed after it.

        Raises PromptError (with a message for the user) for an unknown command, arguments that do
        not fit, or a server that fails to render it."""
        command = next((c for c in self.prompts() if c.name == name), None)
        if command is None:
            raise PromptError(f"/{name} is not a prompt of a connected MCP server")
        arguments, extra = command.arguments_for(args)
        connection = next(c for c in self._connections if c.name == command.server)
        try:
            result = await connection.get_prompt(command.prompt, arguments, self._call_timeout)
        except ToolError as exc:
            raise PromptError(str(exc)) from None
        return render(result, extra)

    def status(self) -> dict[str, str]:
        """Each server's state: starting, ready, failed, closed (or invalid)."""
        states = {spec.name: "invalid" for spec in self._invalid}
        states.update((spec.name, "closed" if self._closed else "starting") for spec in self._servers)
        states.update((c.name, c.state) for c in self._connections)
        return states

    async def aclose(self) -> None:
        """Stop every server (in parallel); stdio servers' process groups are killed."""
        self._closed = True
        if self._launch is not None and not self._launch.done():
            self._launch.cancel()  # the SDK may still be loading: no server was started
        await asyncio.gather(*(c.close() for c in self._connections))
        for task in list(self._background):
            task.cancel()
        self._tools.clear()

    async def __aenter__(self) -> McpHub:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _connect_all(self) -> None:
        if not self._servers:
            return
        try:
            connection_class, self._tool_class = await asyncio.to_thread(_load_sdk)
        except Exception as exc:  # a broken installation: say so for each server, once
            logger.exception("loading the MCP SDK failed")
            for spec in self._servers:
                await self._report(
                    spec.name, f"MCP server '{spec.name}' is unavailable: MCP support failed to load ({exc})"
                )
            return
        if self._closed:
            return
        self._connections = [
            connection_class(
                spec,
                self._cwd,
                self._connection_failed,
                self._connection_ready,
                self._startup_timeout,
                self._connection_changed,
            )
            for spec in self._servers
        ]
        for connection in self._connections:
            connection.start()

    def _ready(self) -> Iterable[ServerConnection]:
        return (c for c in self._connections if c.state == "ready")

    async def _connection_ready(self, connection: ServerConnection) -> None:
        self._offered.add(connection.name)
        await self._notify(self._on_change, "announcing new MCP tools")

    async def _connection_changed(self, connection: ServerConnection) -> None:
        self._tools.pop(connection.name, None)  # built again from its new list
        await self._notify(self._on_change, "announcing changed MCP tools")

    async def _connection_failed(self, connection: ServerConnection, message: str) -> None:
        self._tools.pop(connection.name, None)
        await self._report(connection.name, message)
        if connection.name in self._offered:  # its tools and prompts are gone
            self._offered.discard(connection.name)
            await self._notify(self._on_change, "announcing gone MCP tools")

    async def _report(self, server: str, message: str) -> None:
        await self._notify(self._on_problem, f"reporting a problem with MCP server {server}", server, message)

    @staticmethod
    async def _notify(callback: Callable[..., Any] | None, what: str, *args: str) -> None:
        """Call a user callback, awaiting it if it is a coroutine; its failure is logged, never raised."""
        if callback is None:
            return
        try:
            outcome = callback(*args)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            logger.exception("%s failed", what)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _load_sdk() -> tuple[type[ServerConnection], type[McpTool]]:
    """The SDK-backed classes (imported in a worker thread: the SDK takes ~0.5 s to import)."""
    from iac_code.mcp.connection import ServerConnection
    from iac_code.mcp.tool import McpTool

    return ServerConnection, McpTool


def hub_for_session(
    settings: Settings,
    client_servers: Iterable[Any],
    cwd: Path | str,
    on_problem: ProblemCallback | None = None,
    on_change: ChangeCallback | None = None,
) -> McpHub:
    """The hub for one session: config.json's servers merged with the client's, the settings' timeout."""
    return McpHub(
        server_specs(settings, client_servers),
        cwd,
        on_problem=on_problem,
        on_change=on_change,
        call_timeout=settings.mcp_timeout_seconds,
    )
