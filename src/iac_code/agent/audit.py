"""What the loop tells the audit trail: each permission decision before its call runs, and an
infrastructure change's exit status after it ran (sessions/audit.py stores them).

A record carries the call's arguments twice: a sha256 of them all (canonical JSON), and a short form a
person reads, with secrets redacted: values of arguments and `NAME=value` / `--name value` pairs whose
name says secret (password, token, key, …); the agent's own secrets never reach the model (credentials.py).
A reviewed plan's contract carries only addresses and actions (never values), so
its sha256 and counts are recorded as they are (the apply is handed a private copy whose bytes were hashed
to that sha256 as they were copied: tools/reviewed_apply.py). A question a guard's shim asked during a bash
call records the command that was approved (the shim's argv, shell-quoted), not the call's line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from iac_code.agent.policy import AnsweredBy as AnsweredBy  # the session builds its recorder with it
from iac_code.agent.policy import Ask, Choice, Refuse, Verdict, settled
from iac_code.messages import ToolCall
from iac_code.safe_json import dumps_bytes
from iac_code.sessions.audit import AuditRecord, AuditTrail, AuditUnavailable
from iac_code.tools.base import AccessDetails, ToolResult

logger = logging.getLogger(__name__)

SHORT_CHARS = 200
REDACTED = "***"

_SECRET_NAME = r"[\w.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[\w.-]*"
_ASSIGNED = re.compile(rf"(?i)\b({_SECRET_NAME})(=|:\s*|\s+)(\"[^\"]*\"|'[^']*'|\S+)")
_IS_SECRET_NAME = re.compile(rf"(?i)^-*{_SECRET_NAME}$")


class Recorder(Protocol):
    async def decided(
        self, call: ToolCall, subject: str, verdict: Verdict, answer: Choice | None, details: AccessDetails | None
    ) -> None:
        """Record a decision about `call` (AuditUnavailable when it could not be: the call must not run)."""
        ...

    async def finished(self, call: ToolCall, result: ToolResult) -> None:
        """`call` ran (or was answered without running); an infrastructure change's outcome is recorded."""
        ...


class NoRecording:
    """The loop's recorder where nothing keeps a trail (tests, sub-agents built without one)."""

    async def decided(
        self, call: ToolCall, subject: str, verdict: Verdict, answer: Choice | None, details: AccessDetails | None
    ) -> None:
        pass

    async def finished(self, call: ToolCall, result: ToolResult) -> None:
        pass


class TrailRecorder:
    """One session's recorder: `principal` is read at each record (the session's, as it is then)."""

    def __init__(
        self,
        trail: AuditTrail,
        session_id: str,
        principal: Callable[[], str],
        *,
        answered_by: AnsweredBy = "user",
    ) -> None:
        self._trail = trail
        self._session_id = session_id
        self._principal = principal
        self._answered_by = answered_by
        self._changes: dict[str, AuditRecord] = {}  # allowed infrastructure changes, by call id, until they end

    async def decided(
        self, call: ToolCall, subject: str, verdict: Verdict, answer: Choice | None, details: AccessDetails | None
    ) -> None:
        decision = settled(verdict, answer, self._answered_by)
        allowed = not isinstance(decision, Refuse)
        plan = details.plan if details is not None else None
        judged = _judged_arguments(call, details)
        record = AuditRecord(
            kind="decision",
            principal=self._principal(),
            session=self._session_id,
            tool=subject,
            digest=arguments_digest(judged),
            arguments=self.short_form(judged),
            decision="allowed" if allowed else "denied",
            source=decision.source,
            plan_sha256=str(plan["sha256"]) if plan else None,
            plan_counts={str(k): int(v) for k, v in plan["counts"].items()} if plan else None,
        )
        try:
            await self._trail.append(record)
        except AuditUnavailable:
            raise
        except Exception as exc:  # whatever failed, the decision is not on record: the call must not run
            raise AuditUnavailable(f"{type(exc).__name__}: {exc}") from exc
        if allowed and (plan or (isinstance(verdict, Ask) and verdict.infrastructure_change)):
            self._changes[call.id] = record

    async def finished(self, call: ToolCall, result: ToolResult) -> None:
        decision = self._changes.pop(call.id, None)
        if decision is None:
            return
        outcome = AuditRecord(**{**decision.to_json(), "kind": "outcome", "exit_status": result.exit_code, "time": ""})
        try:
            await self._trail.append(outcome)
        except Exception:  # the change already ran: the model sees its result; the operator sees this
            logger.exception("the outcome of call %s could not be written to the audit trail", call.id)

    def short_form(self, arguments: dict[str, Any]) -> str:
        """The arguments as one line a person reads, secrets redacted, at most SHORT_CHARS characters."""
        text = dumps_bytes(self._redacted(arguments)).decode()
        return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 1] + "…"

    def _redacted(self, value: Any) -> Any:
        """`value` with secrets replaced: the values of keys that name one, and of assignments in text."""
        if isinstance(value, dict):
            return {k: REDACTED if _IS_SECRET_NAME.match(str(k)) else self._redacted(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._redacted(item) for item in value]
        if isinstance(value, str):
            return _ASSIGNED.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", value)
        return value


async def record_server_start(
    trail: AuditTrail, principal: str, session_id: str, server: str, argv: list[str], source: str
) -> None:
    """A client-sent stdio MCP server a shared server is about to start, as a decision row (tool `mcp_server`):
    its name and argv (secrets redacted; the digest covers them whole), and what allowed it (`source`).
    AuditUnavailable when it could not be written: the server must not start."""
    arguments: dict[str, Any] = {"server": server, "argv": argv}
    recorder = TrailRecorder(trail, session_id, lambda: principal)
    record = AuditRecord(
        kind="decision",
        principal=principal,
        session=session_id,
        tool="mcp_server",
        digest=arguments_digest(arguments),
        arguments=recorder.short_form(arguments),
        decision="allowed",
        source=source,
    )
    try:
        await trail.append(record)
    except AuditUnavailable:
        raise
    except Exception as exc:
        raise AuditUnavailable(f"{type(exc).__name__}: {exc}") from exc


def _judged_arguments(call: ToolCall, details: AccessDetails | None) -> dict[str, Any]:
    """What the decision was about: the command a guard's shim asked about (the argv about to run), else the
    call's arguments."""
    if details is not None and details.command:
        return {"command": details.command}
    return call.arguments


def arguments_digest(arguments: dict[str, Any]) -> str:
    """sha256 of the arguments as canonical JSON (sorted keys, ASCII): the same arguments, the same digest."""
    return hashlib.sha256(json.dumps(arguments, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
