"""File tools: read_file, list_files, write_file, edit_file. Every path stays inside the workspace.

read_file, edit_file and write_file go through the call's `ctx.io`: the editor's file system when the
client offers it (unsaved buffers are what the model reads; writes reach the editor), else the local
disk through confined_io's confined, atomic functions. list_files always reads the disk.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from iac_code.system.own_state import is_kept_out
from iac_code.tools.base import (
    Access,
    Category,
    Diff,
    Kind,
    ToolContext,
    ToolError,
    ToolResult,
    integer_arg,
    required_text,
)
from iac_code.tools.file_work import run_file_work
from iac_code.tools.workspace import (
    judged_or_resolved,
    relative_to_workspace,
    resolve_in_workspace,
    shorten,
    truncate_middle,
)

READ_BYTE_CAP = 256 * 1024  # per call: the model pages through bigger files with `offset`
READ_DEFAULT_LINES = 2000
LIST_MAX_ENTRIES = 1000
LIST_MAX_DEPTH = 5


def _locations(args: dict[str, Any], ctx: ToolContext) -> list[str]:
    try:
        return [str(resolve_in_workspace(ctx.roots, str(args.get("path") or ".")))]
    except ToolError:
        return []


class ReadFileTool:
    name = "read_file"
    description = (
        "Read a text file from the workspace. Output lines are numbered (line number, tab, text). "
        f"Reads up to `limit` lines (default {READ_DEFAULT_LINES}) from line `offset` (1-based), "
        f"at most {READ_BYTE_CAP // 1024} KiB per call; page through longer files with `offset`."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."},
        },
        "required": ["path"],
    }
    category: Category = "read"
    kind: Kind = "read"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        return f"Read {shorten(str(args.get('path', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return _locations(args, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = judged_or_resolved(ctx.roots, required_text(args, "path"), ctx.judged_path)
        offset = integer_arg(args, "offset", 1, low=1)
        limit = integer_arg(args, "limit", READ_DEFAULT_LINES, low=1)
        text = await ctx.io.read_text(path)
        return ToolResult(number_lines(text, offset, limit))


def number_lines(text: str, offset: int, limit: int) -> str:
    """`limit` lines of `text` from line `offset`, numbered, within read_file's byte cap; a note says where to
    go on when lines are left."""
    lines = text.splitlines()
    if not lines:
        return "(empty file)"
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end of the file ({len(lines)} lines)")
    out: list[str] = []
    size = 0
    last = offset - 1
    for number in range(offset, min(offset + limit, len(lines) + 1)):
        line = lines[number - 1]
        if len(line) > READ_BYTE_CAP // 2:  # one minified line must not swallow the whole budget
            line = line[: READ_BYTE_CAP // 2] + f" [... line cut at {READ_BYTE_CAP // 2:,} characters]"
        numbered = f"{number:6d}\t{line}"
        size += len(numbered.encode()) + 1
        if size > READ_BYTE_CAP and out:
            break
        out.append(numbered)
        last = number
    if last < len(lines):
        out.append(f"\n[Lines {offset}-{last} of {len(lines)}. Read more with offset={last + 1}.]")
    return "\n".join(out)


class ListFilesTool:
    name = "list_files"
    description = (
        "List a workspace directory: one path per line, relative to the listed directory, directories "
        f"ending in '/'. `depth` 1 (default) lists direct entries; up to {LIST_MAX_DEPTH} recurses. "
        f"Skips .git; at most {LIST_MAX_ENTRIES} entries."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: the workspace root)."},
            "depth": {"type": "integer", "minimum": 1, "maximum": LIST_MAX_DEPTH, "description": "Levels to list."},
        },
    }
    category: Category = "read"
    kind: Kind = "read"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        path = str(args.get("path") or "")
        if path in ("", "."):
            return "List files"
        return f"List {shorten(path.rstrip('/'))}/"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return _locations(args, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        directory = judged_or_resolved(ctx.roots, str(args.get("path") or "."), ctx.judged_path)
        depth = integer_arg(args, "depth", 1, low=1, high=LIST_MAX_DEPTH)
        if not directory.is_dir():
            raise ToolError(f"not a directory: {directory}")
        entries, capped = await run_file_work(_walk, directory, depth)
        if not entries:
            return ToolResult("(empty directory)")
        text = "\n".join(entries)
        if capped:
            text += f"\n[Listing stopped at {LIST_MAX_ENTRIES} entries: list a subdirectory or use a lower depth.]"
        return ToolResult(text)


def _walk(directory: Path, depth: int) -> tuple[list[str], bool]:
    """Sorted entries down to `depth` levels; symlinked directories are shown but not entered.
    FIFOs, sockets and devices are left out, and so is an entry that cannot be examined (a symlink loop)."""
    entries: list[str] = []

    def visit(current: Path, prefix: str, level: int) -> bool:
        try:
            children = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            return True
        for child in children:
            if child.name == ".git" or is_kept_out(Path(child.path)):
                continue
            if len(entries) >= LIST_MAX_ENTRIES:
                return False
            try:
                is_dir = child.is_dir()
                if not (is_dir or child.is_file() or child.is_symlink()):
                    continue
            except OSError:
                continue
            entries.append(f"{prefix}{child.name}{'/' if is_dir else ''}")
            if (
                is_dir
                and level < depth
                and not child.is_symlink()
                and not visit(Path(child.path), f"{prefix}{child.name}/", level + 1)
            ):
                return False
        return True

    complete = visit(directory, "", 1)
    return entries, not complete


class WriteFileTool:
    name = "write_file"
    description = (
        "Create or overwrite a workspace file with `content` (UTF-8). Missing parent directories are "
        "created. Prefer edit_file for changing part of an existing file."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
    }
    category: Category = "write"
    kind: Kind = "edit"

    def access(self, args: dict[str, Any]) -> Access:
        return "write"

    def title(self, args: dict[str, Any]) -> str:
        return f"Write {shorten(str(args.get('path', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return _locations(args, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = judged_or_resolved(ctx.roots, required_text(args, "path"), ctx.judged_path)
        content = args.get("content")
        if not isinstance(content, str):
            raise ToolError("'content' must be a string")
        old_text = await ctx.io.write_text(path, content)
        verb = "Created" if old_text is None else "Overwrote"
        lines = len(content.splitlines())
        name = relative_to_workspace(ctx.roots, path)
        return ToolResult(f"{verb} {name} ({lines} lines).", diff=Diff(str(path), old_text, content))


class EditFileTool:
    name = "edit_file"
    description = (
        "Replace `old_string` with `new_string` in a workspace file. `old_string` must match the file "
        "exactly (including indentation) and exactly once, unless `replace_all` is true. Include enough "
        "surrounding lines to make it unique. Returns a unified diff."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace or absolute inside it."},
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
        },
        "required": ["path", "old_string", "new_string"],
    }
    category: Category = "write"
    kind: Kind = "edit"

    def access(self, args: dict[str, Any]) -> Access:
        return "write"

    def title(self, args: dict[str, Any]) -> str:
        return f"Edit {shorten(str(args.get('path', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return _locations(args, ctx)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = judged_or_resolved(ctx.roots, required_text(args, "path"), ctx.judged_path)
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ToolError("'old_string' and 'new_string' must be strings")
        if not old:
            raise ToolError("'old_string' is empty: use write_file to create or overwrite a file")
        if old == new:
            raise ToolError("'old_string' and 'new_string' are the same: nothing to change")
        replace_all = bool(args.get("replace_all", False))
        name = relative_to_workspace(ctx.roots, path)
        original = await ctx.io.read_text(path)
        count = original.count(old)
        if count == 0:
            raise ToolError(f"'old_string' was not found in {name}; read the file and copy the text exactly")
        if count > 1 and not replace_all:
            raise ToolError(
                f"'old_string' matches {count} times in {name}; add surrounding context to make it unique, "
                "or set replace_all to true"
            )
        updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
        await ctx.io.write_text(path, updated)
        patch = "".join(
            difflib.unified_diff(
                original.splitlines(keepends=True), updated.splitlines(keepends=True), f"a/{name}", f"b/{name}"
            )
        )
        replaced = count if replace_all else 1
        summary = f"Edited {name}: {replaced} replacement{'s' if replaced > 1 else ''}.\n"
        return ToolResult(summary + truncate_middle(patch), diff=Diff(str(path), original, updated))
