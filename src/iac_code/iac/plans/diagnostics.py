"""What a failed plan tells the model: terraform's diagnostics (`plan -json`), as summary, file and line, with
the values they quote redacted.

terraform's plain error text quotes the values it could not use, and the source line with them: a
configuration can make a file's content such a value (`tonumber(file("../secrets/key.txt"))`, a `for_each`
key), so the text would carry the file to the model, past the Read rules and the workspace's bounds. From
the JSON diagnostics only the summary, the detail with every quoted string replaced, the file and the line
are kept; never the snippet (its code and the values of its expressions) nor the address (its instance key).
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = '"(redacted)"'
MAX_DIAGNOSTICS = 20
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')  # Go's %q quoting, as terraform's details use it


def diagnostics(stdout: str) -> list[dict[str, Any]]:
    """The diagnostics of a `-json` run's output (JSON lines), in order."""
    found: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("type") == "diagnostic":
            diagnostic = message.get("diagnostic")
            if isinstance(diagnostic, dict):
                found.append(diagnostic)
    return found


def diagnostics_text(stdout: str) -> str:
    """The errors (and warnings) of a `-json` run as the model reads them; "" when it printed none."""
    found = diagnostics(stdout)
    lines = [_line(d) for severity in ("error", "warning") for d in found if d.get("severity") == severity]
    shown = lines[:MAX_DIAGNOSTICS]
    if len(lines) > len(shown):
        shown.append(f"… and {len(lines) - len(shown)} more")
    return "\n".join(shown)


def unredacted_text(stdout: str) -> str:
    """Every summary and detail as terraform wrote them: for the agent's own reading (what to advise), never
    for the model."""
    return "\n".join(f"{d.get('summary', '')}\n{d.get('detail', '')}" for d in diagnostics(stdout))


def redacted(text: str) -> str:
    """`text` with every quoted string replaced."""
    return _QUOTED.sub(REDACTED, text)


def _line(diagnostic: dict[str, Any]) -> str:
    severity = "Error" if diagnostic.get("severity") == "error" else "Warning"
    where = _where(diagnostic.get("range"))
    text = f"{severity}: {redacted(str(diagnostic.get('summary') or ''))}{where}"
    detail = redacted(str(diagnostic.get("detail") or "")).strip()
    return f"{text}\n  {detail}" if detail else text


def _where(place: Any) -> str:
    if not isinstance(place, dict):
        return ""
    start = place.get("start")
    line = start.get("line") if isinstance(start, dict) else None
    filename = str(place.get("filename") or "")
    if not filename:
        return ""
    return f" ({filename}, line {line})" if isinstance(line, int) else f" ({filename})"
