"""The offline demo: what answers when no model is configured (its replies are in demo_script.json).

Whatever the prompt, it proposes the same small Terraform network in `main.tf`, but it looks before it
writes: each turn starts by listing the workspace, and the file is written only where that listing
shows there is none. Otherwise the demo shows what it would have written. It must never overwrite a
user's file, and `--yes` or the bypass mode would let a write through without asking anyone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from iac_code.messages import Message
from iac_code.providers.base import ProviderEvent, ToolSchema
from iac_code.providers.scripted import Reply, ScriptedProvider

DEMO_FILE = "main.tf"
_LISTING_CUT = "[Listing stopped"  # list_files' note when it did not show every entry


class DemoProvider:
    """Steps: `look` (list the workspace), then `write` or `exists`, then `summary` (or `not_written` when the
    write was refused or failed: the demo must not describe a file it did not write)."""

    def __init__(self, steps: dict[str, Reply], *, model: str, notice: str) -> None:
        self.name = "demo"
        self.model = model
        self.context_window = 128_000
        self._steps = steps
        self._notice = notice

    async def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        player = ScriptedProvider([self._reply(history)], name=self.name, model=self.model)
        async for event in player.stream(system, history, tools, max_tokens=max_tokens):
            yield event

    def _reply(self, history: list[Message]) -> Reply:
        last = history[-1] if history else None
        if last is None or last.role == "user":  # a new turn: say what this is, then look
            look = self._steps["look"]
            return {**look, "text": f"{self._notice}\n\n{look['text']}"}
        if last.role == "tool" and last.tool_name == "list_files":
            return self._steps["write"] if _shows_no_demo_file(last) else self._would_write()
        if last.role == "tool" and last.is_error:
            return self._steps["not_written"]
        return self._steps["summary"]

    def _would_write(self) -> Reply:
        content = _planned_content(self._steps["write"])
        exists = self._steps["exists"]
        return {**exists, "text": f"{exists['text']}```hcl\n{content}```\n"}


def _shows_no_demo_file(listing: Message) -> bool:
    """True only for a complete listing without the file: an error or a cut listing proves nothing."""
    if listing.is_error or _LISTING_CUT in listing.text:
        return False
    return not {DEMO_FILE, f"{DEMO_FILE}/"} & set(listing.text.splitlines())


def _planned_content(write: Reply) -> str:
    arguments: dict[str, Any] = write["tool_calls"][0]["arguments"]
    return str(arguments["content"])
