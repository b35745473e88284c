"""A plain `session/new` answered before the SDK has loaded (see early.py): the record is stored and the
state the agent would answer (config_options.session_state) is answered at once. Only when the
session store is usable: otherwise the agent answers, with what to fix (acp/unavailable_store.py)."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from iac_code.acp.config_options import model_choices, session_state
from iac_code.acp.workspaces import admitted_workspace
from iac_code.agent.rule_files import project_files
from iac_code.config import ConfigError, Settings
from iac_code.errors import InvalidParams
from iac_code.principals import LOCAL
from iac_code.providers.lazy import LazyProvider
from iac_code.providers.presets import available_models
from iac_code.sessions.open import open_store
from iac_code.sessions.store import SessionRecord, SessionStore

logger = logging.getLogger(__name__)

Message = dict[str, Any]

_NEW_SESSION_PARAMS = {"cwd", "mcpServers"}


class EarlySessions:
    """Sessions created before the SDK has loaded."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.store: SessionStore | None = None  # opened by the first session/new answered here
        self.created: list[tuple[str, str]] = []  # (session id, cwd), in the order they were answered

    async def answer(self, message: Message) -> Message | None:
        """The response to a `session/new` if it can be given now, else None (the SDK will answer it)."""
        workspace = plain_new_session_workspace(message)
        if workspace is None or project_files(workspace) or not self._admitted(workspace):
            return None  # (the agent reads and checks a project's permission rules, and says what is refused)
        try:
            model = LazyProvider(self._settings).model  # the model a session/new of the agent starts with
            store = await self._store()
        except ConfigError:
            return None  # the agent answers it, naming the setting to fix
        session_id = f"sess_{uuid.uuid4().hex}"
        await store.create(SessionRecord(session_id=session_id, cwd=str(workspace), model=model, owner=LOCAL.name))
        self.created.append((session_id, str(workspace)))
        logger.debug("answered session/new %r while the SDK loads: %s", message["id"], session_id)
        state = session_state("default", model, model_choices(model, available_models(self._settings)))
        return _response(message, {"sessionId": session_id, **state})

    def _admitted(self, workspace: Path) -> bool:
        """The agent's own checks of a cwd (acp/workspaces.py): one it refuses is left for it to answer."""
        try:
            admitted_workspace(self._settings, LOCAL, str(workspace))
        except InvalidParams:
            return False
        return True

    async def _store(self) -> SessionStore:
        if self.store is None:
            self.store = await open_store(self._settings)
        return self.store


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
