"""glob and grep, both run by ripgrep: fast, .gitignore-aware, and it never follows symlinks out.

ripgrep runs with the searched directory as its cwd, so globs are relative to that directory; the
paths it prints are then given back relative to the workspace, ready for read_file. The agent's own state
(system/own_state.py) is left out of every search without a word; a path inside it is refused. Hidden files
are searched (.github, .terraform.lock.hcl...) but .git never is. The ripgrep binary comes from the
`ripgrep` wheel (system/ripgrep.py).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from iac_code.system.own_state import ripgrep_exclusions
from iac_code.system.processes import command_environment, kill_process_group, spawn
from iac_code.system.ripgrep import COMMON_FLAGS, MISSING, find_ripgrep
from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult, integer_arg, required_text
from iac_code.tools.confined_io import open_regular_file
from iac_code.tools.file_work import run_file_work
from iac_code.tools.workspace import judged_or_resolved, relative_to_workspace, shorten

GLOB_MAX_FILES = 1000
GREP_DEFAULT_RESULTS = 200
GREP_MAX_RESULTS = 2000
GREP_MAX_CONTEXT = 10
STDIN_NAME = "<stdin>"  # how rg names what it reads as `-`
LINE_PREVIEW_COLUMNS = 500  # a minified file must not flood the result with one line


def ripgrep_path() -> str:
    found = find_ripgrep()
    if found is None:
        raise ToolError(MISSING)
    return found


async def run_ripgrep(
    args: list[str], cwd: Path, max_lines: int | None, stdin: int | None = None
) -> tuple[list[str], bool, int, str]:
    """Run rg; return (stdout lines, whether reading stopped at `max_lines`, exit code, stderr). `stdin`: a
    descriptor rg reads as `-` (none: /dev/null).

    Reading stops as soon as `max_lines` lines arrived and rg is killed: a pattern that matches
    everywhere then costs little. The process dies with its group if the caller is cancelled.
    """
    process = await spawn(
        ripgrep_path(),
        *args,
        cwd=cwd,
        env=command_environment(guarded=False),  # ripgrep starts no program: nothing for the guard's shims
        stdin=asyncio.subprocess.DEVNULL if stdin is None else stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    lines: list[str] = []
    stderr = asyncio.ensure_future(process.stderr.read())
    try:
        capped = False
        while raw := await process.stdout.readline():
            if max_lines is not None and len(lines) >= max_lines:
                capped = True
                break
            lines.append(raw.decode("utf-8", errors="replace").rstrip("\n"))
        if capped:
            await kill_process_group(process)
        code = await process.wait()
        return lines, capped, code, (await stderr).decode("utf-8", errors="replace")
    except BaseException:
        await kill_process_group(process)
        raise
    finally:
        stderr.cancel()


def _search_target(args: dict[str, Any], ctx: ToolContext) -> Path:
    target = judged_or_resolved(ctx.roots, str(args.get("path") or "."), ctx.judged_path)
    if not target.exists():
        raise ToolError(f"path not found: {args.get('path')}")
    # ripgrep skips FIFOs, sockets and devices when it walks a directory, but opens one it is given.
    if not (target.is_dir() or target.is_file()):
        raise ToolError(f"{args.get('path')} is not a regular file (a FIFO, socket or device); refused")
    return target


def _workspace_prefix(ctx: ToolContext, directory: Path) -> str:
    """What turns a path rg printed from `directory` into a workspace-relative one."""
    relative = relative_to_workspace(ctx.roots, directory)
    return "" if relative == "." else relative + "/"


class GlobTool:
    name = "glob"
    description = (
        "Find files by name with a glob pattern, e.g. '**/*.tf', 'modules/*/variables.tf', '*.{yaml,yml}'. "
        "A pattern without '/' matches file names at any depth. Respects .gitignore and skips .git. "
        f"Paths are relative to the workspace, newest first (by modification time), at most {GLOB_MAX_FILES}."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, relative to `path`."},
            "path": {"type": "string", "description": "Directory to search in (default: the workspace root)."},
        },
        "required": ["pattern"],
    }
    category: Category = "read"
    kind: Kind = "search"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        return f"Find {shorten(str(args.get('pattern', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = required_text(args, "pattern")
        root = _search_target(args, ctx)
        if not root.is_dir():
            raise ToolError(f"not a directory: {args.get('path')}")
        prefix = _workspace_prefix(ctx, root)
        # rg sorts by mtime itself; a sorted walk is single-threaded, still far quicker than stat()ing here.
        flags = ["--files", *COMMON_FLAGS, f"--glob={pattern}", *ripgrep_exclusions(root), "--sortr=modified"]
        files, _, code, stderr = await run_ripgrep(flags, root, None)
        if code > 1 and not files:
            raise ToolError(f"glob failed: {stderr.strip()}")
        if not files:
            return ToolResult(f"No files match {pattern!r}.")
        shown = [prefix + f for f in files[:GLOB_MAX_FILES]]
        if len(files) > GLOB_MAX_FILES:
            shown.append(f"[{len(files) - GLOB_MAX_FILES} more files not shown: narrow the pattern or path.]")
        return ToolResult("\n".join(shown))


class GrepTool:
    name = "grep"
    description = (
        "Search file contents with a regular expression (Rust regex syntax, like ripgrep). "
        "output_mode 'content' (default) prints matching lines as path:line:text (context lines as "
        "path-line-text); 'files_with_matches' prints only file paths. Filter files with `glob` "
        "(e.g. '*.tf'). Respects .gitignore and skips .git. Paths are relative to the workspace."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {"type": "string", "description": "File or directory to search (default: the workspace root)."},
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.tf'."},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches"]},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": GREP_MAX_CONTEXT,
                "description": "Lines of context around each match (content mode).",
            },
            "case_insensitive": {"type": "boolean"},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": GREP_MAX_RESULTS,
                "description": f"Maximum output lines (default {GREP_DEFAULT_RESULTS}).",
            },
        },
        "required": ["pattern"],
    }
    category: Category = "read"
    kind: Kind = "search"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        where = f" in {shorten(str(args['path']), 40)}" if args.get("path") else ""
        return f"Search {shorten(repr(str(args.get('pattern', ''))), 50)}{where}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = required_text(args, "pattern")
        target = _search_target(args, ctx)
        files_only = args.get("output_mode") == "files_with_matches"
        max_results = integer_arg(args, "max_results", GREP_DEFAULT_RESULTS, low=1, high=GREP_MAX_RESULTS, clamp=True)
        flags = [*COMMON_FLAGS, f"--max-columns={LINE_PREVIEW_COLUMNS}", "--max-columns-preview"]
        if files_only:
            flags.append("--files-with-matches")
        else:
            context = integer_arg(args, "context", 0, low=0, high=GREP_MAX_CONTEXT, clamp=True)
            flags += ["--line-number", "--with-filename", "--no-heading"]
            if context:
                flags.append(f"--context={context}")
        if args.get("case_insensitive"):
            flags.append("--ignore-case")
        if args.get("glob"):
            flags.append(f"--glob={args['glob']}")
        if target.is_dir():
            flags += ripgrep_exclusions(target)  # after the model's glob: the last glob that matches wins
            lines, capped, code, stderr = await run_ripgrep([*flags, "--", pattern], target, max_results)
            cwd = target
        else:
            lines, capped, code, stderr = await _grep_one_file(
                ctx, target, [*flags, "--with-filename"], pattern, max_results
            )
            cwd = target.parent
        prefix = _workspace_prefix(ctx, cwd)
        if code > 1 and not lines:
            raise ToolError(f"grep failed: {stderr.strip()}")
        if not lines:
            return ToolResult(f"No matches for {pattern!r}.")
        if files_only:
            lines.sort()
        shown = [line if line == "--" else prefix + line for line in lines]
        if capped:
            shown.append(f"[Stopped at {max_results} lines: narrow the pattern, path or glob, or raise max_results.]")
        return ToolResult("\n".join(shown))


async def _grep_one_file(
    ctx: ToolContext, target: Path, flags: list[str], pattern: str, max_results: int
) -> tuple[list[str], bool, int, str]:
    """rg on one file, which we open (from the workspace root, without following links: the file the rules
    judged) and hand it as stdin; rg given the path would follow a link put there since. rg names stdin
    `<stdin>`: the lines get the file's name back."""
    fd = await run_file_work(open_regular_file, ctx.roots, target)
    try:
        lines, capped, code, stderr = await run_ripgrep([*flags, "--", pattern, "-"], target.parent, max_results, fd)
    finally:
        os.close(fd)
    named = [target.name + line.removeprefix(STDIN_NAME) if line.startswith(STDIN_NAME) else line for line in lines]
    return named, capped, code, stderr
