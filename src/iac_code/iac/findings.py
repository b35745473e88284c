"""What every checker reports: a finding ({tool, rule, severity, file, line, message}) or a skip with its reason.

The same shape goes everywhere: into the tool call's rawOutput, into the cache, and across the pipe from
the warm worker processes. `file` is relative to the workspace; `line` is 1-based or None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    tool: str
    rule: str
    severity: Severity
    file: str
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        # Spelled out: dataclasses.asdict deep-copies each field, half the time of an unchanged 300-file re-check
        return {
            "tool": self.tool,
            "rule": self.rule,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        severity = data.get("severity")
        line = data.get("line")
        return cls(
            tool=str(data["tool"]),
            rule=str(data["rule"]),
            severity=cast(Severity, severity) if severity in SEVERITIES else "warning",
            file=str(data["file"]),
            line=line if isinstance(line, int) and not isinstance(line, bool) and line >= 1 else None,
            message=str(data["message"]),
        )

    def sort_key(self) -> tuple[int, str, int, str, str]:
        return (SEVERITIES.index(self.severity), self.file, self.line or 0, self.tool, self.rule)


@dataclass(frozen=True)
class Skipped:
    tool: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"tool": self.tool, "reason": self.reason}
