"""iac_check: validate, lint and scan the workspace's infrastructure code offline, with file:line findings.

Read-only: it never runs `terraform init` and never touches the network. It asks only before a checker would
start code the repository ships (the provider plugins of a committed `.terraform/`, tflint plugins). The work is
done by iac_code.iac (classification, checkers, cache, warm workers); this module is the tool's face:
arguments, confinement to the workspace, and the three views of the result (rawOutput for clients,
locations for editors, a compact text for the model).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iac_code.iac import walk
from iac_code.iac.cache import ResultCache, shared_cache
from iac_code.iac.checker import Checker
from iac_code.iac.checkers import default_checkers
from iac_code.iac.engine import UNSAFE_RULE, CheckReport, run_checks
from iac_code.iac.findings import SEVERITIES, Finding
from iac_code.iac.sources import MAX_FILE_BYTES
from iac_code.messages import ToolCall
from iac_code.system.processes import unreadable_paths
from iac_code.tools.base import Access, Category, Kind, Location, ToolContext, ToolError, ToolResult
from iac_code.tools.iac_plan import Unreadable, denied_paths
from iac_code.tools.workspace import path_argument_locations, resolve_in_workspace, root_of, shorten

MAX_LOCATIONS = 50
TEXT_BUDGET = 8_000  # characters of findings in the model's text, then counts of what was left out
MESSAGE_WIDTH = 300


class IacCheckTool:
    name = "iac_check"
    category: Category = "read"
    # "search": like grep, it looks through files and answers with file:line locations, which clients
    # list and link for search tools.
    kind: Kind = "search"

    def __init__(
        self,
        checkers: Mapping[str, Checker] | None = None,
        cache: ResultCache | None = None,
        cache_path: Path | None = None,
        unreadable: Unreadable | None = None,
    ) -> None:
        """`cache`: the results cache to use; else the process's one for `cache_path` (Settings.iac_cache_path;
        None: in memory only). `unreadable`: the paths the session's Read rules deny (the checkers' programs
        run where they cannot read them)."""
        self.unreadable = unreadable
        self.checkers = dict(checkers) if checkers is not None else default_checkers()
        self._cache = cache
        self._cache_path = cache_path
        listed = "; ".join(f"{name}: {checker.summary}" for name, checker in self.checkers.items())
        self.description = (
            "Validate, lint and security-scan infrastructure code offline: Terraform/OpenTofu, CloudFormation, "
            "Alibaba Cloud ROS, Kubernetes manifests, Helm charts, Dockerfiles. Files are recognised by content. "
            "Returns findings as file:line with the rule and severity, errors first. Read-only and cached: run it "
            "after every change to infrastructure files, and before proposing to apply anything. "
            f"Checkers ({listed})."
        )
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File or directory to check, relative to the workspace (default: all of it).",
                },
                "checks": {
                    "type": "array",
                    "items": {"type": "string", "enum": list(self.checkers)},
                    "description": "Run only these checkers (default: all that apply).",
                },
            },
        }

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        path = str(args.get("path") or ".")
        return "Check infrastructure code" if path in (".", "./") else f"Check {shorten(path, 50)}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return path_argument_locations(ctx.roots, args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = resolve_in_workspace(ctx.roots, _path_argument(args))
        root = root_of(ctx.roots, target)  # the cwd, or the additional directory holding the target
        if not target.exists():
            raise ToolError(f"path not found: {args.get('path')}")
        requested = self._requested(args.get("checks"))
        try:
            with unreadable_paths(await denied_paths(self.unreadable)):
                report = await run_checks(
                    root, target, self.checkers, self._result_cache(), requested, ctx.request_access
                )
        except walk.WalkFailed as exc:
            raise ToolError(str(exc)) from None
        text = render_text(report)
        if root != ctx.roots[0]:  # in an additional directory: its findings' paths are relative to it
            text = f"Paths are relative to {root}.\n{text}"
        return ToolResult(
            text=text,
            raw_output=report.raw_output(),
            locations=finding_locations(root, report.findings),
        )

    def _requested(self, value: Any) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ToolError("'checks' must be a list of checker names")
        unknown = [name for name in value if name not in self.checkers]
        if unknown:
            raise ToolError(f"unknown checker(s) {', '.join(unknown)}; valid checkers: {', '.join(self.checkers)}")
        return list(dict.fromkeys(value)) or None

    def _result_cache(self) -> ResultCache:
        if self._cache is None:
            self._cache = shared_cache(self._cache_path)
        return self._cache


def workspace_check_call() -> ToolCall:
    """The call the /check command makes on the user's behalf: every checker on the whole workspace."""
    return ToolCall(id=f"check_{uuid.uuid4().hex[:16]}", name=IacCheckTool.name, arguments={"path": "."})


def path_check_call(path: str) -> ToolCall:
    """A call made on the user's behalf on one file or directory (the session option that checks each edit)."""
    return ToolCall(id=f"check_{uuid.uuid4().hex[:16]}", name=IacCheckTool.name, arguments={"path": path})


def _path_argument(args: dict[str, Any]) -> str:
    path = args.get("path")
    if path is None or path == "":
        return "."
    if not isinstance(path, str):
        raise ToolError("'path' must be a string")
    return path


def finding_locations(root: Path, findings: list[Finding]) -> list[Location]:
    """Where the findings are, errors first, one entry per file and line, at most MAX_LOCATIONS. A file
    left out as unsafe (a FIFO, a symlink to a device) is no place to send an editor."""
    locations: list[Location] = []
    for finding in findings:
        if finding.rule == UNSAFE_RULE:
            continue
        location = Location(path=str(root / finding.file), line=finding.line)
        if location not in locations:
            locations.append(location)
            if len(locations) == MAX_LOCATIONS:
                break
    return locations


def render_text(report: CheckReport) -> str:
    """The model's view: a header, then findings grouped by file (files with errors first), capped."""
    lines = [_header(report)]
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_file.setdefault(finding.file, []).append(finding)
    order = sorted(by_file, key=lambda f: (min(SEVERITIES.index(x.severity) for x in by_file[f]), f))
    used = len(lines[0])
    left_findings, left_files = len(report.findings), len(order)
    for file in order:
        if used + len(file) + 2 > TEXT_BUDGET:
            break
        lines.append(f"\n{file}")
        used += len(file) + 2
        shown = 0
        for finding in sorted(by_file[file], key=Finding.sort_key):
            line = _finding_line(finding)
            if used + len(line) + 1 > TEXT_BUDGET:
                break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        left_findings -= shown
        left_files -= shown == len(by_file[file])
        if shown < len(by_file[file]):
            break
    if left_findings:
        lines.append(
            f"\n[{left_findings} more findings in {left_files} files not shown: "
            "check a narrower path or fewer checks to see them.]"
        )
    return "\n".join(lines)


def _header(report: CheckReport) -> str:
    counts = {severity: 0 for severity in SEVERITIES}
    for finding in report.findings:
        counts[finding.severity] += 1
    head = f"Checked {report.files} infrastructure files"
    if report.ran:
        head += f" with {', '.join(report.ran)}"
    summary = ", ".join(
        f"{n} {severity}{'s' if n != 1 and severity != 'info' else ''}" for severity, n in counts.items()
    )
    text = f"{head}.\n{summary if report.findings else 'No findings.'}"
    if report.left_out:
        text += "\n" + _left_out(report.left_out)
    if report.skipped:
        text += "\nSkipped: " + "; ".join(f"{s.tool} ({s.reason})" for s in report.skipped)
    return text


def _left_out(counts: dict[str, int]) -> str:
    """e.g. "Left out: 80,000 files beyond the walk's limit of 20,000 (check a narrower path); ..."."""
    reasons = {
        "overFileLimit": f"beyond the walk's limit of {walk.MAX_FILES:,} files (check a narrower path)",
        "overSizeCap": f"over the {MAX_FILE_BYTES // (1024 * 1024)} MB size cap",
        "unsafe": f"unsafe to read (see the {UNSAFE_RULE} findings)",
    }
    parts = [f"{n:,} file{'s' if n != 1 else ''} {reasons[why]}" for why, n in counts.items()]
    return f"Left out: {'; '.join(parts)}."


def _finding_line(finding: Finding) -> str:
    where = f"line {finding.line}" if finding.line else "file"
    message = " ".join(finding.message.split())
    if len(message) > MESSAGE_WIDTH:
        message = message[: MESSAGE_WIDTH - 1] + "…"
    return f"  {finding.severity} {where} [{finding.tool} {finding.rule}] {message}"
