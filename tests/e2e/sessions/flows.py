"""Small steps the session tests share: load, resume and fork on the wire, and what the model saw."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import AgentProcess, Message, updates
from tests.fakes.openai_server import ScriptedOpenAI


def load(agent: AgentProcess, session_id: str, cwd: Path) -> tuple[Message, list[Message]]:
    """session/load → (its response, everything the agent sent before it)."""
    return agent.response(
        agent.start_request("session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []})
    )


def replayed(before: list[Message], session_id: str) -> list[dict[str, Any]]:
    """The replayed updates (available_commands_update left out), checking they name the session."""
    assert all(m["params"]["sessionId"] == session_id for m in before if m.get("method") == "session/update")
    return [u for u in updates(before) if u["sessionUpdate"] != "available_commands_update"]


def summary(update: dict[str, Any]) -> tuple[str, ...]:
    """An update reduced to what the order checks need: its kind and its text or tool call id/status."""
    kind = update["sessionUpdate"]
    if kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
        return kind, update["content"]["text"]
    return kind, update["toolCallId"], update["status"]


def last_model_messages(model: ScriptedOpenAI) -> list[dict[str, Any]]:
    return model.requests[-1]["messages"]


def model_saw(model: ScriptedOpenAI, text: str) -> bool:
    """Whether the latest model request holds `text` in any message."""
    return any(text in str(m.get("content") or "") for m in last_model_messages(model))


def stored_messages(config_dir: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's messages as the server stored them (Message.to_dict()), read from its database."""
    with sqlite3.connect(config_dir / "iac-code.db") as conn:
        rows = conn.execute("SELECT body FROM iac_messages WHERE session_id = ? ORDER BY seq", [session_id])
        return [json.loads(body) for (body,) in rows]


def edit_database(config_dir: Path, statement: str, *params: object) -> None:
    """Change the server's database by hand, as a person with the sqlite3 shell might."""
    with sqlite3.connect(config_dir / "iac-code.db") as conn:
        conn.execute(statement, params)
