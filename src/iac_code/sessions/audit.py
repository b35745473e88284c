"""The audit trail: every permission decision, recorded before the call runs, in the session store's
database (SQLite, or PostgreSQL so that every instance of a cluster writes one trail).

A record is a "decision" (allowed or denied, and what decided: `rule:<file>:<entry>`, `mode:<id>`,
`remembered`, `user:<option>`, `headless-flag`) or, after an infrastructure change ran, its "outcome" (the
exit status), a second row rather than an update: the table is append-only (its triggers refuse UPDATE
and DELETE). `AuditUnavailable` is the one error a failed write raises: the caller does not run the call.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, runtime_checkable

from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.sessions.keys import iso_time

Kind = Literal["decision", "outcome"]
Decision = Literal["allowed", "denied"]

# the columns of iac_audit a record is written to, in the order of AuditRecord's fields after `time`
COLUMNS = (
    "kind, principal, session_id, tool, digest, arguments, decision, source, plan_sha256, plan_counts, exit_status"
)


@dataclass(frozen=True)
class AuditRecord:
    kind: Kind
    principal: str
    session: str
    tool: str  # the tool, or the subject a running call asked about ("bash" for a reviewed plan's apply)
    digest: str  # sha256 of the call's arguments
    arguments: str  # their short form, secrets redacted
    decision: Decision
    source: str
    plan_sha256: str | None = None
    plan_counts: dict[str, int] | None = None
    exit_status: int | None = None
    time: str = ""  # ISO 8601 UTC, set by the trail as it is written

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class AuditUnavailable(Exception):
    """The trail could not be written (the message says why)."""


@runtime_checkable
class AuditTrail(Protocol):
    async def append(self, record: AuditRecord) -> None:
        """Write `record` durably; AuditUnavailable when it could not be."""
        ...

    async def read(self, session: str | None = None, since: str | None = None) -> list[AuditRecord]:
        """The records, oldest first: of one session, from an ISO 8601 UTC time on (see since_time)."""
        ...


@runtime_checkable
class Audited(Protocol):
    """A session store whose database holds the audit trail."""

    def audit_trail(self) -> AuditTrail: ...


def since_time(text: str) -> str:
    """`--since` (an ISO 8601 date or time; without a zone, UTC) as the trail's time format; ValueError."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return iso_time(moment.timestamp())


def record_from_row(columns: tuple[Any, ...], *, plan_counts: dict[str, int] | None, time: str) -> AuditRecord:
    """A trail row (its COLUMNS) as a record; each store reads its own time and plan counts."""
    kind, principal, session, tool, digest, arguments, decision, source, plan_sha256, _, exit_status = columns
    return AuditRecord(
        kind=kind,
        principal=str(from_json_text(principal)),
        session=str(from_json_text(session)),
        tool=str(from_json_text(tool)),
        digest=digest,
        arguments=str(from_json_text(arguments)),
        decision=decision,
        source=str(from_json_text(source)),
        plan_sha256=plan_sha256,
        plan_counts=plan_counts,
        exit_status=exit_status,
        time=time,
    )


def record_params(record: AuditRecord, plan_counts: object) -> list[object]:
    """The values of a record's COLUMNS, in order (the inverse of record_from_row); each store gives its own
    form of the plan counts."""
    return [
        record.kind,
        to_json_text(record.principal),
        to_json_text(record.session),
        to_json_text(record.tool),
        record.digest,
        to_json_text(record.arguments),
        record.decision,
        to_json_text(record.source),
        record.plan_sha256,
        plan_counts,
        record.exit_status,
    ]


def read_query(session: str | None, since: str | None, placeholder: str, time_cast: str = "") -> tuple[str, list[str]]:
    """The trail's rows, oldest first, of one session and from a time on when given: the SQL, with the store's
    parameter `placeholder` (and what its time parameter is cast with), and its parameters."""
    where, params = [], []
    if session is not None:
        where.append(f"session_id = {placeholder}")
        params.append(to_json_text(session))
    if since is not None:
        where.append(f"at >= {placeholder}{time_cast}")
        params.append(since)
    condition = f"WHERE {' AND '.join(where)}" if where else ""
    return f"SELECT at, {COLUMNS} FROM iac_audit {condition} ORDER BY id", params
