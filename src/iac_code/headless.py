"""`iac-code -p PROMPT`: one turn in the current directory, streamed to stdout.

The session's permission policy (agent/policy.py) decides, with no one to ask: `--yes` is the
bypass-permissions mode, `--allow-tools` names tools remembered as allowed, and whatever the policy would
ask about is denied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

from iac_code.agent.events import (
    Compaction,
    ErrorReport,
    Event,
    PermissionRequest,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolRunning,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.agent.policy import Mode, Remembered, Verdict, decide
from iac_code.config import Settings
from iac_code.tools.base import Access


def run_headless(args: argparse.Namespace, settings: Settings) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        print("iac-code: the prompt is empty", file=sys.stderr)
        return 2
    allowed = {name.strip() for name in args.allow_tools.split(",") if name.strip()}
    return asyncio.run(_run(prompt, settings, allowed, allow_all=args.yes, output_format=args.output_format))


async def _run(prompt: str, settings: Settings, allowed: set[str], *, allow_all: bool, output_format: str) -> int:
    from iac_code.agent.factory import build_loop
    from iac_code.providers.presets import build_provider

    mode: Mode = "bypass-permissions" if allow_all else "default"
    remembered: dict[str, Remembered] = dict.fromkeys(allowed, "allow")

    def judge(tool_name: str, access: Access) -> Verdict:
        return decide(access, mode, remembered.get(tool_name))

    loop = build_loop(settings, build_provider(settings), Path.cwd().resolve(), judge)
    printer = _PRINTERS[output_format](sys.stdout)
    end: TurnEnd | None = None
    failed = False
    async for event in loop.run(prompt):
        if isinstance(event, PermissionRequest):  # no one to ask: the safe answer is no
            name = event.call.name
            print(f"iac-code: denied {name} (allow it with --allow-tools {name} or --yes)", file=sys.stderr)
            event.resolve("reject_once")
            continue
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


class _Printer(Protocol):
    def show(self, event: Event) -> None: ...

    def close(self) -> None: ...


_PRINTERS: dict[str, Callable[[TextIO], _Printer]] = {
    "text": _TextPrinter,
    "json": _JsonPrinter,
    "stream-json": _StreamJsonPrinter,
}


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
