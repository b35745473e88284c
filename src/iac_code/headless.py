"""`iac-code -p PROMPT`: one prompt in the current directory, streamed to stdout.

The prompt goes to the same session core as an ACP session's (agent/session.py), with this module as its
face: a slash command (`/check`, `/help`, `/init`, the Markdown commands, MCP prompts) runs as it would in
an editor. The session's permission policy (agent/policy.py) decides, with no one to ask: `--yes` is the
bypass-permissions mode, `--allow-tools` names tools remembered as allowed, and whatever the policy would
ask about is denied. Neither covers a command that changes real infrastructure (the policy asks about those
every time): only `--allow-infra-changes` answers them "allow once".

Every question and its answer is shown too: on stderr (text output: the title, and what the question shows
beside it, such as the summary of a Terraform plan an apply is bound to), as a `permission_request` event
(stream-json) and in `permissionRequests` (json), with the plan contract as `plan` when there is one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from iac_code.agent.events import (
    Compaction,
    ErrorReport,
    Event,
    NoticeSeverity,
    PermissionRequest,
    SubagentSteps,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.agent.policy import Choice, Mode, Question, Remembered, Run, unasked
from iac_code.agent.session_commands import CommandInfo
from iac_code.config import ConfigError, Settings
from iac_code.errors import IacError, InvalidParams
from iac_code.mcp.naming import PREFIX as MCP_TOOL_PREFIX
from iac_code.messages import user
from iac_code.sessions.audit import AuditTrail
from iac_code.tools.questions import UNSUPPORTED, Answer, Form, Link

if TYPE_CHECKING:
    from iac_code.host.host import SessionHost


def run_headless(args: argparse.Namespace, settings: Settings) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        print("iac-code: the prompt is empty", file=sys.stderr)
        return 2
    allowed = {name.strip() for name in args.allow_tools.split(",") if name.strip()}
    if problem := _unknown_tools(allowed):
        print(f"iac-code: --allow-tools: {problem}", file=sys.stderr)
        return 2
    return asyncio.run(
        _run(
            prompt,
            settings,
            allowed,
            allow_all=args.yes,
            allow_infra_changes=args.allow_infra_changes,
            output_format=args.output_format,
        )
    )


def _unknown_tools(names: set[str]) -> str | None:
    """What is wrong with names --allow-tools would remember in vain (a typo must not leave a run silently
    denied), listing the valid ones; None when every name is known."""
    from iac_code.tools.registry import permission_subjects

    known = permission_subjects()
    unknown = sorted(name for name in names if name not in known and not name.startswith(MCP_TOOL_PREFIX))
    if not unknown:
        return None
    return f"unknown {', '.join(unknown)}; valid: {', '.join(known)}, and {MCP_TOOL_PREFIX}<server>__<tool>"


async def _run(
    prompt: str,
    settings: Settings,
    allowed: set[str],
    *,
    allow_all: bool,
    allow_infra_changes: bool,
    output_format: str,
) -> int:
    from iac_code.host.host import SessionHost

    host = SessionHost(settings)
    try:  # the audit trail lives in the session store's database: no trail, no run
        trail = await host.audit_trail()
    except (ConfigError, IacError) as exc:
        print(f"iac-code: the audit trail cannot be written: {exc}", file=sys.stderr)
        return 2
    try:
        return await _run_session(host, trail, prompt, allowed, allow_all, allow_infra_changes, output_format)
    finally:
        await host.close()


async def _run_session(
    host: SessionHost,
    trail: AuditTrail,
    prompt: str,
    allowed: set[str],
    allow_all: bool,
    allow_infra_changes: bool,
    output_format: str,
) -> int:
    mode: Mode = "bypass-permissions" if allow_all else "default"
    remembered: dict[str, Remembered] = dict.fromkeys(allowed, "allow")
    face = _HeadlessFace(_PRINTERS[output_format](sys.stdout), allow_infra_changes)
    try:
        session = host.open_one_shot(face, Path.cwd().resolve(), mode=mode, remembered=remembered, trail=trail)
    except InvalidParams as exc:  # a bad rule in the project's .iac-code/settings.json, named with its file
        print(f"iac-code: {exc.data.get(exc.field, exc.message)}", file=sys.stderr)
        return 2
    session.mcp.start()
    try:
        end = await session.prompt(user(prompt))  # text a model API can encode (lone surrogates replaced)
    finally:
        await session.close()  # the MCP servers stop with the run
    face.printer.show(end)
    face.printer.close()
    return 0 if end.stop_reason == "end_turn" and not face.failed else 1


class _HeadlessFace:
    """The session's face on a terminal or in CI: events through the chosen printer, problems on stderr,
    and permission questions answered with no one to ask."""

    def __init__(self, printer: _Printer, allow_infra_changes: bool) -> None:
        self.printer = printer
        self.failed = False  # a failed model call or command: the run exits 1
        self._allow_infra_changes = allow_infra_changes

    async def show(self, event: Event) -> None:
        if isinstance(event, Compaction) and not event.message:
            return  # a compaction still running (its summary as it comes): the output tells how it ended
        self.printer.show(event)
        if isinstance(event, ErrorReport):  # a failed model call (the turn ends with "error")
            self.failed = True
            print(f"\niac-code: error: {event.message}", file=sys.stderr)

    async def say(self, text: str) -> None:
        self.printer.show(TextDelta(text))  # a command's output is the answer

    async def notice(self, severity: NoticeSeverity, title: str, detail: str) -> None:
        print(f"iac-code: [{title}] {detail.strip()}", file=sys.stderr)

    async def command_failed(self, text: str) -> None:
        self.failed = True
        print(f"iac-code: {text.strip()}", file=sys.stderr)

    async def ask(self, request: PermissionRequest) -> Choice:
        choice = _answer_unasked(request, self._allow_infra_changes)
        self.printer.asked(request, choice)
        return choice

    async def elicit(self, call_id: str, question: Form | Link) -> Answer:
        return UNSUPPORTED  # no one to ask: ask_user puts its question in the answer, MCP servers are declined

    async def titled(self, title: str) -> None:
        pass  # nothing stores or shows a one-shot run's title

    async def commands_changed(self, commands: list[CommandInfo]) -> None:
        pass  # no client lists them: /help shows them on request


def _answer_unasked(request: PermissionRequest, allow_infra_changes: bool) -> Choice:
    """The policy's answer with no one to ask (agent/policy.unasked), a refusal said on stderr with its hint."""
    question = Question(request.subject, request.call.name, request.title, request.infrastructure_change)
    answer = unasked(question, allow_infra_changes)
    if isinstance(answer, Run):
        return "allow_once"
    print(f"iac-code: denied {request.subject} ({answer.reason})", file=sys.stderr)
    return "reject_once"


class _TextPrinter:
    """The answer on stdout; tool activity and errors on stderr. A turn without model text (a command such
    as /check runs its tool call without the model) answers with its last tool result."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.wrote_text = False
        self.last_result = ""

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self.wrote_text = True
        elif isinstance(event, ToolUseStart):
            print(f"\n→ {event.title}", file=sys.stderr)
        elif isinstance(event, ToolFinished):
            self.last_result = event.result.text
            if event.result.is_error:
                print(f"✗ {event.call.name}: {event.result.text[:500]}", file=sys.stderr)
        elif isinstance(event, Compaction):
            print(f"\n[{event.message}]", file=sys.stderr)
        elif isinstance(event, TurnEnd):
            if not self.wrote_text and self.last_result:
                self.out.write(self.last_result)
            if event.stop_reason not in ("end_turn", "error"):  # an error was already said on stderr
                print(f"\n[stopped: {event.stop_reason}]", file=sys.stderr)

    def asked(self, request: PermissionRequest, choice: Choice) -> None:
        details = request.details
        if details is not None and details.text:  # e.g. the plan an apply is bound to: what was (not) approved
            print(f"\n? {_question_title(request)} → {choice}\n{details.text}", file=sys.stderr)

    def close(self) -> None:
        self.out.write("\n")


class _StreamJsonPrinter:
    """One JSON object per line per event, for scripts and CI bots."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def show(self, event: Event) -> None:
        self.out.write(json.dumps(event_to_json(event)) + "\n")
        self.out.flush()

    def asked(self, request: PermissionRequest, choice: Choice) -> None:
        self.out.write(json.dumps(permission_json(request, choice)) + "\n")
        self.out.flush()

    def close(self) -> None:
        pass


class _JsonPrinter:
    """A single JSON object at the end: the answer, the stop reason, usage, tool calls."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.text: list[str] = []
        self.tools: list[dict[str, Any]] = []
        self.questions: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.end: TurnEnd | None = None
        self.cost: dict[str, Any] | None = None  # the session's, after the last model call (when priced)
        self.last_result = ""  # the answer of a turn without model text (as _TextPrinter's)

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ToolFinished):
            self.last_result = event.result.text
            self.tools.append(
                {"name": event.call.name, "input": event.call.arguments, "isError": event.result.is_error}
            )
        elif isinstance(event, ErrorReport):
            self.errors.append(event.message)
        elif isinstance(event, UsageReport):
            self.cost = _cost(event)
        elif isinstance(event, TurnEnd):
            self.end = event

    def asked(self, request: PermissionRequest, choice: Choice) -> None:
        question = permission_json(request, choice)
        del question["type"]
        self.questions.append(question)

    def close(self) -> None:
        end = self.end
        result = {
            "result": "".join(self.text) or self.last_result,
            "stopReason": end.stop_reason if end else None,
            "usage": _usage(end) if end else None,
            "cost": self.cost,
            "toolCalls": self.tools,
            "permissionRequests": self.questions,
            "errors": self.errors,
        }
        self.out.write(json.dumps(result) + "\n")


class _Printer(Protocol):
    def show(self, event: Event) -> None: ...

    def asked(self, request: PermissionRequest, choice: Choice) -> None: ...

    def close(self) -> None: ...


_PRINTERS: dict[str, Callable[[TextIO], _Printer]] = {
    "text": _TextPrinter,
    "json": _JsonPrinter,
    "stream-json": _StreamJsonPrinter,
}


def _usage(end: TurnEnd) -> dict[str, int]:
    """The turn's tokens, named as ACP's Usage names them (inputTokens holds the cached ones too)."""
    tokens = end.usage
    return {
        "inputTokens": tokens.input_tokens,
        "outputTokens": tokens.output_tokens,
        "thoughtTokens": tokens.thought_tokens,
        "cachedReadTokens": tokens.cache_read_tokens,
        "cachedWriteTokens": tokens.cache_write_tokens,
        "totalTokens": tokens.input_tokens + tokens.output_tokens,
    }


def _cost(report: UsageReport) -> dict[str, Any] | None:
    """The session's cost so far, as ACP's usage_update carries it; None when unknown."""
    return None if report.cost is None else {"amount": report.cost.amount, "currency": report.cost.currency}


def permission_json(request: PermissionRequest, choice: Choice) -> dict[str, Any]:
    """A question and the answer it got, as stream-json's `permission_request` event."""
    question: dict[str, Any] = {
        "type": "permission_request",
        "id": request.call.id,
        "title": _question_title(request),
        "subject": request.subject,
        "infrastructureChange": request.infrastructure_change,
        "answer": choice,
    }
    if request.details is not None:
        if request.details.text:
            question["details"] = request.details.text
        if request.details.plan is not None:
            question["plan"] = request.details.plan
    return question


def _question_title(request: PermissionRequest) -> str:
    return f"Infrastructure change: {request.title}" if request.infrastructure_change else request.title


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
    if isinstance(event, ToolProgress):  # a sub-agent's steps, or the client terminal a command runs in
        progress = event.progress
        if isinstance(progress, SubagentSteps):
            steps = [{"title": step.title, "state": step.state} for step in progress.steps]
            return {"type": "tool_progress", "id": event.call.id, "steps": steps}
        return {"type": "tool_progress", "id": event.call.id, "terminalId": progress.terminal_id}
    if isinstance(event, ToolFinished):
        return {
            "type": "tool_result",
            "id": event.call.id,
            "isError": event.result.is_error,
            "output": event.result.text,
        }
    if isinstance(event, UsageReport):
        usage = {"type": "usage", "inputTokens": event.input_tokens, "outputTokens": event.output_tokens}
        return usage | ({"cost": cost} if (cost := _cost(event)) is not None else {})
    if isinstance(event, TurnEnd):
        return {"type": "result", "stopReason": event.stop_reason, "usage": _usage(event)}
    if isinstance(event, (ErrorReport, Compaction)):
        return {"type": "error" if isinstance(event, ErrorReport) else "compaction", "message": event.message}
    raise TypeError(f"unknown event {event!r}")
