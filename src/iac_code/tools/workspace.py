"""Confinement of tool paths to the session workspace, and output trimming shared by the tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iac_code.system.own_state import is_kept_out
from iac_code.tools.common import MAX_OUTPUT_CHARS, ToolError

# Where a session works: its cwd, or all its roots, the cwd first (relative paths start there), then the
# additional directories of session/new (ACP's additionalDirectories). Every root is inside the workspace.
Roots = Path | Sequence[Path]


def roots_of(workspace: Roots) -> tuple[Path, ...]:
    """The roots, resolved; the first is the cwd."""
    found = (workspace,) if isinstance(workspace, Path) else tuple(workspace)
    if not found:
        raise ValueError("a workspace has at least one root")
    return tuple(root.resolve() for root in found)


def resolve_in_workspace(workspace: Roots, path: str) -> Path:
    """The absolute, symlink-free path `path` names, refused unless it lies inside one of the roots.

    Relative paths are taken from the cwd (the first root). `Path.resolve` follows every symlink that exists
    and keeps the missing tail as written, so a file that does not exist yet is judged by its
    deepest existing parent: a link to the outside cannot smuggle a new file out either.
    """
    return confined(workspace, resolved_path(roots_of(workspace)[0], path), path)


def resolved_path(workspace: Path, path: str) -> Path:
    """The absolute, symlink-free path `path` names (relative: from the workspace), wherever it lies."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = workspace.resolve() / candidate
    try:
        return candidate.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolError(f"cannot resolve path {path!r}: {exc}") from None


def confined(workspace: Roots, resolved: Path, shown: str) -> Path:
    """`resolved` (absolute, symlink-free), refused unless it lies inside a root and outside the agent's
    own state (system/own_state.py: the config dir, the database, the tokens file)."""
    roots = roots_of(workspace)
    if not any(resolved.is_relative_to(root) for root in roots):
        where = roots[0] if len(roots) == 1 else ", ".join(str(root) for root in roots)
        raise ToolError(f"path {shown!r} is outside the workspace {where}")
    if is_kept_out(resolved):
        raise ToolError(f"path {shown!r} is iac-code's own state (its config dir, database or tokens); refused")
    return resolved


def root_of(workspace: Roots, resolved: Path) -> Path:
    """The root that holds `resolved` (a confined path): the innermost, when one root lies inside another,
    so that the open from its descriptor walks the fewest components."""
    holding = [root for root in roots_of(workspace) if resolved.is_relative_to(root)]
    if not holding:
        raise ToolError(f"path {str(resolved)!r} is outside the workspace")
    return max(holding, key=lambda root: len(root.parts))


def judged_or_resolved(workspace: Roots, path: str, judged: Path | None) -> Path:
    """The path a file tool opens: the one its call was judged on when the loop resolved it once before the
    permission rules saw it (ToolContext.judged_path; resolving again here could follow a link that was
    flipped since), else `path` resolved now."""
    return resolve_in_workspace(workspace, path) if judged is None else confined(workspace, judged, path)


def path_argument_locations(workspace: Roots, args: dict[str, Any]) -> list[str]:
    """Where a tool's `path` argument (default: the cwd) points, as its call's locations; none when it
    would leave the workspace (the run refuses it)."""
    try:
        return [str(resolve_in_workspace(workspace, str(args.get("path") or ".")))]
    except ToolError:
        return []


def relative_to_workspace(workspace: Roots, path: Path) -> str:
    """How the model should name `path` in later calls: relative to the cwd ("." for it) when inside it,
    else (in an additional directory) absolute."""
    cwd = roots_of(workspace)[0]
    if not path.is_relative_to(cwd):
        return path.as_posix()
    return path.relative_to(cwd).as_posix() or "."


def truncate_middle(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """`text` cut to about `limit` characters, keeping its head and tail (errors tend to sit at the end)."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n\n[... {cut:,} characters cut ...]\n\n{text[-tail:]}"


def shorten(text: str, width: int = 60) -> str:
    """The first line of `text`, cut to `width` characters with an ellipsis: for tool titles."""
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    if len(first_line) <= width and first_line == text.strip():
        return first_line
    return first_line[: width - 1].rstrip() + "…"
