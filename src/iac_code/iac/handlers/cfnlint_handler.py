"""cfn-lint inside a warm worker: the rules are loaded once, each request lints its templates.

Loading cfn-lint's rules costs about half a second; linting a template once they are loaded costs tens
of milliseconds. Standard library and cfn-lint only: this file runs in the worker process.
"""

from __future__ import annotations

from typing import Any

from cfnlint.config import ConfigMixIn
from cfnlint.runner import Runner, run_template_by_file_path

DEFAULT_REGIONS = ["us-east-1"]
SEVERITIES = {"error": "error", "warning": "warning", "informational": "info"}

_rules = Runner(ConfigMixIn(regions=DEFAULT_REGIONS)).rules


def handle(request: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {}
    for unit in request["units"]:
        path, rel = unit["files"][0]
        config = ConfigMixIn(regions=request.get("regions") or DEFAULT_REGIONS)
        matches = run_template_by_file_path(path, config, _rules, ignore_bad_template=False)
        results[unit["rel"]] = [_finding(match, rel) for match in matches if _reported(match)]
    return {"results": results}


def _reported(match: Any) -> bool:
    # E0000 is a template that does not parse: the YAML/JSON syntax check reports those already,
    # except duplicate keys, which only cfn-lint sees.
    return bool(match.rule.id != "E0000" or "Duplicate" in str(match.message))


def _finding(match: Any, rel: str) -> dict[str, Any]:
    line = match.linenumber if isinstance(match.linenumber, int) and match.linenumber >= 1 else None
    return {
        "tool": "cfn-lint",
        "rule": str(match.rule.id),
        "severity": SEVERITIES.get(str(match.rule.severity).lower(), "warning"),
        "file": rel,
        "line": line,
        "message": str(match.message),
    }
