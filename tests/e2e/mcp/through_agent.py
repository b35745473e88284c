"""Helpers for driving MCP servers through the real agent over ACP (tests/e2e/acp/wire.py does the wire)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import AgentProcess, Message, updates

READY_TIMEOUT = 60  # a fixture server imports the MCP SDK; on a loaded 2-core machine that takes seconds


def open_session(
    agent: AgentProcess, cwd: Path, servers: list[dict[str, Any]], *, ready: Iterable[str] = ()
) -> tuple[str, list[Message]]:
    """session/new with `servers`; returns once the commands announced include a prompt of each server
    named in `ready` (the agent announces them when the server is connected). Returns what was read,
    the response included."""
    response, seen = agent.response(agent.start_request("session/new", {"cwd": str(cwd), "mcpServers": servers}))
    assert "result" in response, response
    seen.append(response)
    waiting = set(ready)
    while waiting:
        message = agent.next(READY_TIMEOUT)
        seen.append(message)
        for name in announced(message):
            if name.startswith("mcp__"):
                waiting.discard(name.split("__")[1])
    return response["result"]["sessionId"], seen


def announced(message: Message) -> list[str]:
    """The command names in a message that is (or an update that is) an available_commands_update."""
    found = updates([message], "available_commands_update") if "method" in message else [message]
    return [command["name"] for update in found for command in update.get("availableCommands", [])]


def tool_updates(messages: list[Message]) -> list[dict[str, Any]]:
    return [u for u in updates(messages) if u["sessionUpdate"] in ("tool_call", "tool_call_update")]


def mcp_notes(messages: list[Message]) -> list[str]:
    """The "[MCP] …" messages the agent showed."""
    chunks = [u["content"].get("text", "") for u in updates(messages, "agent_message_chunk")]
    return [chunk.strip() for chunk in chunks if chunk.strip().startswith("[MCP]")]


def allow(option: str = "allow_once", asked: list[Message] | None = None):
    """A permission answer selecting `option`; the requests are recorded in `asked`."""

    def answer(request: Message) -> Any:
        if asked is not None:
            asked.append(request)
        return {"outcome": {"outcome": "selected", "optionId": option}}

    return answer


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    """A scripted model reply calling one tool."""
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}
