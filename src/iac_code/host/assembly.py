"""How one session's runtime is put together, for every face (ACP and headless alike): its rules, its loop
(tools, provider, system prompt), its MCP servers, its audit, its policy state from its record."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iac_code.agent.audit import AnsweredBy
from iac_code.agent.factory import LoopParts, build_loop
from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import Mode, is_mode
from iac_code.agent.rules import RulesError, load_rules
from iac_code.agent.session import SessionCore, SessionFace
from iac_code.agent.workspace import Workspace
from iac_code.config import Settings
from iac_code.errors import InvalidParams
from iac_code.mcp import hub_for_session
from iac_code.messages import Message
from iac_code.principals import Principal
from iac_code.providers.lazy import LazyProvider
from iac_code.repository import project_directories
from iac_code.sessions.audit import AuditTrail
from iac_code.sessions.store import SessionRecord, SessionStore
from iac_code.skills.discovery import find_skills
from iac_code.tools.backends import WorkspaceIO

# (the session's workspace, what the session gives its loop) → its loop; tests pass their own
LoopMaker = Callable[[Workspace, LoopParts], AgentLoop]


@dataclass
class SessionOpening:
    """One session about to come up: who, where, and what it was."""

    session_id: str
    root: Path  # its cwd, admitted and resolved: the Workspace is worked out from it (resolved_workspace)
    principal: Principal
    record: SessionRecord  # mode, model, title and remembered answers it goes on with
    history: Sequence[Message] = ()
    mcp_servers: Sequence[Any] = field(default_factory=list)  # the client's, as admitted (host/client_mcp.py)
    answered_by: AnsweredBy = "user"  # who answers its questions, as the audit records it
    remembered_trust: bool = True  # whether the user's earlier `/permissions trust` counts (headless: no)
    additional: tuple[Path, ...] = ()  # its additionalDirectories, admitted and resolved (host/workspaces.py)


def assemble(
    settings: Settings,
    opening: SessionOpening,
    face: SessionFace,
    *,
    store: SessionStore | None,
    io: WorkspaceIO | None = None,
    make_loop: LoopMaker | None = None,
    trail: AuditTrail | None = None,
    prewarm_checkers: bool = True,
) -> SessionCore:
    """The session's runtime, its MCP servers not started yet. `store` None: nothing of it is kept (headless,
    whose decisions still go to `trail`). InvalidParams on `cwd` for a bad project rule; ConfigError when the
    model settings cannot make a provider."""
    workspace, record = resolved_workspace(settings, opening), opening.record
    loop_maker = make_loop or functools.partial(_build_loop, settings, prewarm_checkers)
    mode: Mode = record.mode if is_mode(record.mode) else "default"
    return SessionCore(
        opening.session_id,
        workspace,
        face,
        functools.partial(loop_maker, workspace),
        store=store,
        mcp=functools.partial(hub_for_session, settings, opening.mcp_servers, workspace.root),
        mode=mode,
        title=record.title,
        always=dict(record.permissions),
        model=record.model,
        options=record.options,
        history=opening.history,
        principal=opening.principal,
        io=io,
        config_dir=settings.config_dir,
        trail=trail,
        answered_by=opening.answered_by,
    )


def resolved_workspace(settings: Settings, opening: SessionOpening) -> Workspace:
    """The session's workspace, worked out once: its project directories, the rules in force there for its
    principal, the skills found. InvalidParams on `cwd` for a bad project rule."""
    root = opening.root
    directories = tuple(project_directories(root))
    others = [project_directories(extra) for extra in opening.additional]
    try:
        rules = load_rules(
            directories,
            settings.permissions,
            settings.trusted_projects,
            settings.config_dir,
            remembered_trust=opening.remembered_trust,
            principal=opening.principal,
            additional=others,
        )
    except RulesError as exc:  # a bad rule in the project's .iac-code/settings.json, named with its file
        raise InvalidParams("cwd", str(exc)) from None
    extra_dirs = _not_yet_in(directories, others)
    skills = find_skills((*directories, *extra_dirs), settings.config_dir)
    return Workspace(root, directories, rules, skills, opening.additional, extra_dirs)


def _not_yet_in(directories: Sequence[Path], others: Sequence[Sequence[Path]]) -> tuple[Path, ...]:
    """The directories of `others` that `directories` (and earlier ones of `others`) do not hold, in order: a
    repository root shared with the cwd is read once."""
    found: dict[Path, None] = {}
    for directory in (d for dirs in others for d in dirs):
        if directory not in directories:
            found.setdefault(directory)
    return tuple(found)


def _build_loop(settings: Settings, prewarm_checkers: bool, workspace: Workspace, parts: LoopParts) -> AgentLoop:
    # A session must not wait for a model SDK to import: the provider is built on first use. A long-lived
    # agent warms iac_check's heavy checkers; a one-shot run would mostly pay for workers it never uses.
    return build_loop(settings, LazyProvider(settings), workspace, parts, prewarm_checkers=prewarm_checkers)
