"""MCP servers for a session: configuration, background connections, tools and prompts (see README.md).

Nothing imported here loads the MCP SDK (about half a second): a hub loads it in a worker thread
when it starts its first server. `iac_code.mcp.tool.McpTool` is the SDK-backed tool class.
"""

from iac_code.mcp.config import HttpServer, InvalidServer, ServerSpec, StdioServer, server_specs
from iac_code.mcp.hub import ChangeCallback, McpHub, ProblemCallback, hub_for_session
from iac_code.mcp.processes import kill_all_servers
from iac_code.mcp.prompts import PromptCommand, PromptError

__all__ = [
    "ChangeCallback",
    "HttpServer",
    "InvalidServer",
    "McpHub",
    "ProblemCallback",
    "PromptCommand",
    "PromptError",
    "ServerSpec",
    "StdioServer",
    "hub_for_session",
    "kill_all_servers",
    "server_specs",
]
