"""In-process fakes for loop tests: a provider that plays scripted events, tiny tools, and a loop over them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.agent.policy import Judge, run_everything
from iac_code.agent.rules import Rules
from iac_code.agent.workspace import Workspace
from iac_code.messages import Message, ToolCall
from iac_code.providers.base import Finish, ProviderError, TextDelta, ToolCallReady, Usage
from iac_code.repository import project_directories
from iac_code.skills.discovery import SkillCatalog, find_skills
from iac_code.tools.base import ToolContext, ToolResult


class FakeProvider:
    """Each model call plays the next script entry: a list of events, an exception, or "hang"."""

    name = "fake"

    def __init__(self, *script: Any, context_window: int = 100_000) -> None:
        self.script = list(script)
        self.model = "fake-model"
        self.context_window = context_window
        self.calls: list[list[Message]] = []
        self.tool_names: list[list[str]] = []  # the tools offered to each call

    async def stream(self, system, history, tools, *, max_tokens, cache_key=""):
        self.calls.append(list(history))
        self.tool_names.append([tool.name for tool in tools])
        entry = self.script.pop(0) if self.script else [TextDelta("(done)"), Finish("end_turn")]
        if isinstance(entry, Exception):
            raise entry
        for event in entry:
            if event == "hang":
                await asyncio.Event().wait()
            yield event


def say(text: str, *, input_tokens: int = 10) -> list[Any]:
    return [TextDelta(text), Usage(input_tokens, len(text)), Finish("end_turn")]


def call(name: str, call_id: str = "c1", **arguments: Any) -> list[Any]:
    return [ToolCallReady(ToolCall(call_id, name, arguments)), Usage(10, 5), Finish("tool_use")]


@dataclass
class FakeTool:
    name: str
    category: str = "read"
    kind: str = "read"
    delay: float = 0.0
    description: str = "a fake tool"
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    runs: list[dict[str, Any]] = field(default_factory=list)
    running_now: int = 0
    max_concurrent: int = 0

    def title(self, args: dict[str, Any]) -> str:
        return f"Fake {self.name}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    def access(self, args: dict[str, Any]) -> str:
        return self.category

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.runs.append(args)
        self.running_now += 1
        self.max_concurrent = max(self.max_concurrent, self.running_now)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.running_now -= 1
        return ToolResult(f"{self.name} ok")


DEFAULT_CONFIG = LoopConfig()


def make_loop(
    provider: Any,
    tools: Iterable[Any] = (),
    *,
    config: LoopConfig = DEFAULT_CONFIG,
    judge: Judge = run_everything,
    workspace: Path = Path("/tmp"),
    **collaborators: Any,
) -> AgentLoop:
    """A loop over `tools` (by name) that runs every call, with the default config unless given one."""
    return AgentLoop(config, provider, {t.name: t for t in tools}, workspace, judge=judge, **collaborators)


__all__ = ["FakeProvider", "FakeTool", "ProviderError", "call", "make_loop", "say"]


def workspace_at(
    root: Path, *, config_dir: Path | None = None, rules: Rules | None = None, skills: SkillCatalog | None = None
) -> Workspace:
    """The workspace of a session in `root`, as the host resolves it: its project directories, and the
    skills found there unless given; no permission rules unless given."""
    directories = tuple(project_directories(root))
    found = skills if skills is not None else find_skills(directories, config_dir)
    return Workspace(directories[0], directories, rules if rules is not None else Rules(directories[0]), found)
