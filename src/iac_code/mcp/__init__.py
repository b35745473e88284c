"""MCP servers for a session: configuration, background connections, tools and prompts (see README.md)."""

from iac_code.mcp.config import HttpServer, InvalidServer, ServerSpec, StdioServer, server_specs
from iac_code.mcp.hub import McpHub, ProblemCallback, hub_for_session
from iac_code.mcp.prompts import PromptCommand, PromptError
from iac_code.mcp.stdio import kill_all_servers
from iac_code.mcp.tool import McpTool

__all__ = [
    "HttpServer",
    "InvalidServer",
    "McpHub",
    "McpTool",
    "ProblemCallback",
    "PromptCommand",
    "PromptError",
    "ServerSpec",
    "StdioServer",
    "hub_for_session",
    "kill_all_servers",
    "server_specs",
]
