"""A plain `session/new` answered before the SDK has loaded (see early.py): created by the session host the
way the agent creates one (its record stored), and the state the agent would answer
(config_options.session_state) answered at once. Only when that can succeed: anything the agent would
refuse or explain (a cwd it refuses, project rules to read, model settings or a store to fix) is left to it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from iac_code.acp.config_options import Toggles, model_choices, session_state
from iac_code.agent.rule_files import project_files
from iac_code.config import ConfigError
from iac_code.errors import IacError
from iac_code.host.host import SessionHost
from iac_code.principals import LOCAL
from iac_code.providers.presets import available_models
from iac_code.repository import project_directories

logger = logging.getLogger(__name__)

Message = dict[str, Any]

_NEW_SESSION_PARAMS = {"cwd", "mcpServers"}


class EarlySessions:
    """Sessions created before the SDK has loaded."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self.created: list[tuple[str, str]] = []  # (session id, cwd), in the order they were answered

    async def answer(self, message: Message, toggles: Toggles = None) -> Message | None:
        """The response to a `session/new` if it can be given now, else None (the SDK will answer it);
        `toggles`: its on/off settings, for a client that shows them."""
        workspace = plain_new_session_workspace(message)
        if workspace is None or project_files(project_directories(workspace)):
            return None  # (the agent reads and checks a project's permission rules, and says what is refused)
        try:
            workspace = self._host.workspace(LOCAL, str(workspace))
            record = self._host.new_record(LOCAL, workspace)
            await self._host.store_new(record)
        except (IacError, ConfigError):  # a refused cwd, model settings or a store to fix: the agent names them
            return None
        self.created.append((record.session_id, str(workspace)))
        logger.debug("answered session/new %r while the SDK loads: %s", message["id"], record.session_id)
        choices = model_choices(record.model, available_models(self._host.settings))
        state = session_state("default", record.model, choices, toggles)
        return _response(message, {"sessionId": record.session_id, **state})


def plain_new_session_workspace(message: Message) -> Path | None:
    """The resolved workspace of a `session/new` the agent would answer with a new session and no MCP
    server; None for anything else (an error, MCP servers, unknown fields), which the SDK handles."""
    params = message.get("params")
    request_id = message.get("id")
    if (
        message.get("method") != "session/new"
        or not (isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)))
        or not isinstance(params, dict)
        or not set(params) <= _NEW_SESSION_PARAMS
        or params.get("mcpServers") not in (None, [])
        or not isinstance(params.get("cwd"), str)
    ):
        return None
    try:
        path = Path(params["cwd"])
        return path.resolve() if path.is_absolute() and path.is_dir() else None
    except (OSError, ValueError):  # a NUL in the path, a loop of symlinks: let the agent say so
        return None


def _response(request: Message, result: Message) -> Message:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}
