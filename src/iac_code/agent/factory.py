"""One way to build a session's AgentLoop from the settings, for the ACP server and the headless CLI."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import Judge
from iac_code.agent.system_prompt import build_system_prompt
from iac_code.config import Settings
from iac_code.iac.session_start import start_workspace_summary
from iac_code.messages import Message
from iac_code.providers.base import ModelProvider
from iac_code.tools.registry import default_tools

# (judge, on_message, history to start from) → the session's loop
LoopFactory = Callable[[Judge, Callable[[Message], None] | None, list[Message]], AgentLoop]


def build_loop(
    settings: Settings,
    provider: ModelProvider,
    workspace: Path,
    judge: Judge,
    on_message: Callable[[Message], None] | None = None,
    history: Sequence[Message] = (),
    *,
    prewarm_checkers: bool = False,
) -> AgentLoop:
    """With `prewarm_checkers` (a long-lived agent), a workspace with infrastructure warms iac_check's
    heavy checkers in the background; a one-shot run would mostly pay for workers it never uses."""
    return AgentLoop(
        provider,
        default_tools(settings.iac_cache_path),
        workspace,
        judge=judge,
        history=list(history),
        on_message=on_message,
        system_prompt=build_system_prompt(workspace, config_dir=settings.config_dir),  # + the user's AGENTS.md
        max_turns=settings.max_turns,
        max_tokens=settings.max_tokens,
        compact_threshold=settings.compact_threshold,
        workspace_summary=start_workspace_summary(workspace, prewarm=prewarm_checkers),
    )
