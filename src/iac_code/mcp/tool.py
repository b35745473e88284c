"""An MCP server's tool as an iac-code Tool.

Permissions come from the server's annotations, read strictly: only an explicit
`readOnlyHint: true` makes a tool `read` (runs without asking); every other MCP tool is `external`
(asks, refused in read-only and plan modes). The ACP kind is only an icon, chosen from hints the
server set explicitly: read-only → read (fetch when it also says openWorld), destructive → delete,
open world → fetch, otherwise other. (The spec's defaults, destructive and open-world when unsaid,
would make every unannotated tool a "delete".)
"""

from __future__ import annotations

from typing import Any

import mcp_types

from iac_code.mcp.connection import ServerConnection
from iac_code.mcp.naming import tool_title
from iac_code.mcp.results import tool_result
from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolResult


class McpTool:
    def __init__(self, name: str, connection: ServerConnection, tool: mcp_types.Tool, timeout: float) -> None:
        self.name = name
        self.server = connection.name
        self.tool_name = tool.name
        hints = tool.annotations or mcp_types.ToolAnnotations()
        self.read_only = hints.read_only_hint is True
        self.description = tool.description or tool.title or hints.title or tool.name
        self.parameters = _parameters(tool.input_schema)
        self.category: Category = "read" if self.read_only else "execute"
        self.kind: Kind = _kind(hints)
        self._display_name = tool.title or hints.title or tool.name
        self._connection = connection
        self._timeout = timeout

    def title(self, args: dict[str, Any]) -> str:
        return tool_title(self._display_name, self.server)

    def access(self, args: dict[str, Any]) -> Access:
        return "read" if self.read_only else "external"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return tool_result(await self._connection.call_tool(self.tool_name, args, self._timeout))


def _kind(hints: mcp_types.ToolAnnotations) -> Kind:
    if hints.read_only_hint is True:
        return "fetch" if hints.open_world_hint is True else "read"
    if hints.destructive_hint is True:
        return "delete"
    if hints.open_world_hint is True:
        return "fetch"
    return "other"


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's input schema as the model gets it: an object schema, without `$schema`."""
    parameters = {key: value for key, value in schema.items() if key != "$schema"}
    parameters.setdefault("type", "object")
    if parameters["type"] == "object":
        parameters.setdefault("properties", {})
    return parameters
