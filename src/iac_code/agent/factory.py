"""One way to build a session's AgentLoop from the settings, for the ACP server and the headless CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from iac_code.agent.audit import Recorder
from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.agent.policy import Judge
from iac_code.agent.secrets import session_redactor
from iac_code.agent.system_prompt import build_system_prompt
from iac_code.agent.workspace import Workspace
from iac_code.config import Settings
from iac_code.iac.plans.store import session_plans_dir
from iac_code.iac.session_start import start_workspace_summary
from iac_code.messages import Message
from iac_code.providers.base import ModelProvider
from iac_code.providers.presets import session_prices
from iac_code.tools.backends import LocalIO, WorkspaceIO
from iac_code.tools.base import Tool
from iac_code.tools.registry import default_tools


@dataclass
class LoopParts:
    """What a session gives the loop it owns, at construction (the loop is never set up from outside)."""

    judge: Judge
    on_message: Callable[[Message], None] | None = None
    history: list[Message] = field(default_factory=list)
    mode_instructions: str = ""  # the session's mode, as the system prompt's addition
    extra_tools: Callable[[], Iterable[Tool]] | None = None  # tools that come and go (MCP servers)
    model: str = ""  # the model the session last used; "" is the configured default
    io: WorkspaceIO | None = None  # where tools read, write and run; None is the local disk
    session_id: str = ""  # names the session's private folder of saved plans (iac_plan) and its turns' spans
    recorder: Recorder | None = None  # where the loop records each permission decision; None: nowhere
    # the paths the session's Read rules deny, now: hidden from the programs tools start (agent/read_denials.py)
    unreadable: Callable[[], list[str]] | None = None


# the session's parts → its loop; the ACP server and headless bind the settings and the workspace
LoopFactory = Callable[[LoopParts], AgentLoop]


def build_loop(
    settings: Settings,
    provider: ModelProvider,
    workspace: Workspace,
    parts: LoopParts,
    *,
    prewarm_checkers: bool = False,
) -> AgentLoop:
    """With `prewarm_checkers` (a long-lived agent), a workspace with infrastructure warms iac_check's
    heavy checkers in the background; a one-shot run would mostly pay for workers it never uses."""
    plans_dir = session_plans_dir(settings.config_dir, parts.session_id or "unsaved")
    config = LoopConfig(
        # + the user's AGENTS.md and the skills' names and descriptions
        system_prompt=build_system_prompt(workspace, config_dir=settings.config_dir),
        mode_instructions=parts.mode_instructions,
        model=parts.model,
        max_turns=settings.max_turns,
        max_tokens=settings.max_tokens,
        compact_threshold=settings.compact_threshold,
        tools_share=settings.tools_share,
        session_id=parts.session_id,
        prices=session_prices(settings).price,
    )
    tools = default_tools(
        settings.iac_cache_path, plans_dir, settings.provider_schema_cache_path, workspace.skills, parts.unreadable
    )
    return AgentLoop(
        config,
        provider,
        tools,
        workspace.root,
        judge=parts.judge,
        history=list(parts.history),
        on_message=parts.on_message,
        extra_tools=parts.extra_tools,
        io=parts.io if parts.io is not None else LocalIO(workspace.roots),  # the session's every root
        recorder=parts.recorder,
        redactor=session_redactor(settings),
        workspace_summary=start_workspace_summary(workspace.root, prewarm=prewarm_checkers),
    )
