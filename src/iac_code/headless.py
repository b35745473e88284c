"""`iac-code -p PROMPT`: one turn in the current directory, streamed to stdout.

Write and execute tools are denied unless `--allow-tools` names them or `--yes` allows everything:
with no one to ask, the safe answer is no.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from iac_code.agent.events import (
    Compaction,
    ErrorReport,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolRunning,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.agent.loop import AgentLoop, Decision
from iac_code.config import Settings
from iac_code.messages import ToolCall
from iac_code.tools.base import Tool


def run_headless(args: argparse.Namespace, settings: Settings) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        print("iac-code: the prompt is empty", file=sys.stderr)
        return 2
    allowed = {name.strip() for name in args.allow_tools.split(",") if name.strip()}
    return asyncio.run(_run(prompt, settings, allowed, allow_all=args.yes, output_format=args.output_format))


async def _run(prompt: str, settings: Settings, allowed: set[str], *, allow_all: bool, output_format: str) -> int:
    from iac_code.providers.presets import build_provider
    from iac_code.tools.registry import default_tools

    async def permission(call: ToolCall, tool: Tool) -> Decision:
        if allow_all or call.name in allowed:
            return "allow"
        print(f"iac-code: denied {call.name} (allow it with --allow-tools {call.name} or --yes)", file=sys.stderr)
        return "deny"

    loop = AgentLoop(
        build_provider(settings),
        default_tools(),
        Path.cwd().resolve(),
        permission=permission,
        max_turns=settings.max_turns,
        max_tokens=settings.max_tokens,
        compact_threshold=settings.compact_threshold,
    )
    printer = _PRINTERS[output_format](sys.stdout)
    end: TurnEnd | None = None
    failed = False
    async for event in loop.run(prompt):
        printer.show(event)
        if isinstance(event, TurnEnd):
            end = event
        elif isinstance(event, ErrorReport):  # a failed model call ends the turn "normally": it is not
            failed = True
            print(f"\niac-code: error: {event.message}", file=sys.stderr)
    printer.close()
    return 0 if end is not None and end.stop_reason == "end_turn" and not failed else 1


class _TextPrinter:
    """The answer on stdout; tool activity and errors on stderr."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
        elif isinstance(event, ToolUseStart):
            print(f"\n→ {event.title}", file=sys.stderr)
        elif isinstance(event, ToolFinished) and event.result.is_error:
            print(f"✗ {event.call.name}: {event.result.text[:500]}", file=sys.stderr)
        elif isinstance(event, Compaction):
            print(f"\n[{event.message}]", file=sys.stderr)
        elif isinstance(event, TurnEnd) and event.stop_reason != "end_turn":
            print(f"\n[stopped: {event.stop_reason}]", file=sys.stderr)

    def close(self) -> None:
        self.out.write("\n")


class _StreamJsonPrinter:
    """One JSON object per line per event, for scripts and CI bots."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Event) -> None:
        self.out.write(json.dumps(event_to_json(event)) + "\n")
        self.out.flush()

    def close(self) -> None:
        pass


class _JsonPrinter:
    """A single JSON object at the end: the answer, the stop reason, usage, tool calls."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.text: list[str] = []
        self.tools: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.end: TurnEnd | None = None

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ToolFinished):
            self.tools.append(
                {"name": event.call.name, "input": event.call.arguments, "isError": event.result.is_error}
            )
        elif isinstance(event, ErrorReport):
            self.errors.append(event.message)
        elif isinstance(event, TurnEnd):
            self.end = event

    def close(self) -> None:
        end = self.end
        result = {
            "result": "".join(self.text),
            "stopReason": end.stop_reason if end else None,
            "usage": _usage(end) if end else None,
            "toolCalls": self.tools,
            "errors": self.errors,
        }
        self.out.write(json.dumps(result) + "\n")


_PRINTERS = {"text": _TextPrinter, "json": _JsonPrinter, "stream-json": _StreamJsonPrinter}


def _usage(end: TurnEnd) -> dict[str, int]:
    return {
        "inputTokens": end.input_tokens,
        "outputTokens": end.output_tokens,
        "totalTokens": end.input_tokens + end.output_tokens,
    }


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ThinkingDelta):
        return {"type": "thinking", "text": event.text}
    if isinstance(event, ToolUseStart):
        call = event.call
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments, "title": event.title}
    if isinstance(event, ToolRunning):
        return {"type": "tool_running", "id": event.call.id}
    if isinstance(event, ToolFinished):
        return {
            "type": "tool_result",
            "id": event.call.id,
            "isError": event.result.is_error,
            "output": event.result.text,
        }
    if isinstance(event, UsageReport):
        return {"type": "usage", "inputTokens": event.input_tokens, "outputTokens": event.output_tokens}
    if isinstance(event, TurnEnd):
        return {"type": "result", "stopReason": event.stop_reason, "usage": _usage(event)}
    if isinstance(event, (ErrorReport, Compaction)):
        return {"type": "error" if isinstance(event, ErrorReport) else "compaction", "message": event.message}
    raise TypeError(f"unknown event {event!r}")
