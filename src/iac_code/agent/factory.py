"""One way to build a session's AgentLoop from the settings, for the ACP server and the headless CLI."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import Judge
from iac_code.config import Settings
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
) -> AgentLoop:
    return AgentLoop(
        provider,
        default_tools(),
        workspace,
        judge=judge,
        history=list(history),
        on_message=on_message,
        max_turns=settings.max_turns,
        max_tokens=settings.max_tokens,
        compact_threshold=settings.compact_threshold,
    )
