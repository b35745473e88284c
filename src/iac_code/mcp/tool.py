"""An MCP server's tool as an iac-code Tool.

How its calls are judged comes from the user's trust in its server, its annotations and its name
(mcp/access.py): "read" for a read-only tool of a trusted server, "infra_change" for one that says it
applies, destroys or deletes infrastructure, "claimed_read" for a read-only tool of an untrusted server,
"external" for the rest. Its category is "read" for the two read-only accesses, else "execute". The ACP
kind is only an icon, chosen from hints the server set explicitly: read-only → read (fetch when it also
says openWorld), destructive → delete, open world → fetch, otherwise other. (The spec's defaults,
destructive and open-world when unsaid, would make every unannotated tool a "delete".)
"""

from __future__ import annotations

from typing import Any

import mcp_types

from iac_code.mcp.access import tool_access
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
        self._access = tool_access(
            tool.name,
            read_only=hints.read_only_hint is True,
            destructive=hints.destructive_hint is True,
            trusted=connection.spec.trusted,
        )
        self.description = tool.description or tool.title or hints.title or tool.name
        self.parameters = _parameters(tool.input_schema)
        self.category: Category = "read" if self._access in ("read", "claimed_read") else "execute"
        self.kind: Kind = _kind(hints)
        self._display_name = tool.title or hints.title or tool.name
        self._connection = connection
        self._timeout = timeout

    def title(self, args: dict[str, Any]) -> str:
        return tool_title(self._display_name, self.server)

    def access(self, args: dict[str, Any]) -> Access:
        return self._access

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return tool_result(await self._connection.call_tool(self.tool_name, args, self._timeout, ctx.elicit))


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
