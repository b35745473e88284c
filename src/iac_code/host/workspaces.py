"""Where a session may be opened: the `cwd` of session/new, load, resume and fork, checked before anything
of it is read.

- Never inside the agent's own state, in every transport: the config dir (the database and its WAL, the
  tokens, plans, trusted projects, stored credentials) and the tokens file's directory when it lives
  elsewhere. A session there would hand the agent's tools the store's file (its locks dropped by a read).
  A cwd *above* them (a home directory) is allowed: the tools keep out of them themselves.
- On a shared server, under the roots the operator gave the principal (`workspace_roots`: by name, else "*";
  an admin only when named). The local user (stdio, or HTTP without authentication) is never held.

A refusal is InvalidParams on `cwd` (-32602). The `additionalDirectories` beside the cwd (absolute directories the
session may work in too) are admitted by the same rules, each refusal naming its entry
(`additionalDirectories[1]`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from iac_code.config import Settings
from iac_code.errors import InvalidParams
from iac_code.principals import Principal, is_shared
from iac_code.system.own_state import state_directories

EVERYONE = "*"  # workspace_roots' key for the principals not named
FIELD = "additionalDirectories"
MAX_ADDITIONAL_DIRECTORIES = 32  # each is walked for project files, rules and skills when the session opens


def admitted_workspace(settings: Settings, principal: Principal, cwd: str, field: str = "cwd") -> Path:
    """The resolved workspace of `cwd`, if `principal` may open a session there; else InvalidParams on `field`."""
    workspace = resolved_directory(cwd, field)
    if (state := _agent_state_holding(settings, workspace)) is not None:
        raise InvalidParams(field, f"{cwd[:200]} is inside the agent's own state ({state}): choose a project directory")
    roots = workspace_roots(settings, principal)
    if roots is not None and not any(_within(workspace, root) for root in roots):
        allowed = ", ".join(str(root) for root in roots) or "none"
        raise InvalidParams(field, f"{cwd[:200]} is outside the workspaces {principal.name} may open ({allowed})")
    return workspace


def admitted_directories(settings: Settings, principal: Principal, directories: Sequence[str]) -> tuple[Path, ...]:
    """The session's additional directories, resolved, each admitted as a cwd is (in order, repeats once);
    else InvalidParams naming the entry: `additionalDirectories[1]`."""
    if len(directories) > MAX_ADDITIONAL_DIRECTORIES:
        raise InvalidParams(FIELD, f"at most {MAX_ADDITIONAL_DIRECTORIES} directories")
    admitted: dict[Path, None] = {}
    for index, directory in enumerate(directories):
        if not isinstance(directory, str):
            raise InvalidParams(f"{FIELD}[{index}]", "must be a string")
        admitted.setdefault(admitted_workspace(settings, principal, directory, f"{FIELD}[{index}]"))
    return tuple(admitted)


def check_recorded_cwd(session_id: str, recorded: str, workspace: Path) -> None:
    """A stored session is opened only in the workspace it was recorded for."""
    if os.path.normpath(recorded) != str(workspace):
        raise InvalidParams("cwd", f"session {session_id} belongs to {recorded}")


def resolved_directory(cwd: str, field: str = "cwd") -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise InvalidParams(field, f"not an absolute path: {cwd[:200]!r}")
    try:
        if not path.is_dir():
            raise InvalidParams(field, f"no such directory: {cwd[:200]}")
        return path.resolve()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a loop: is_dir() raises for some
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InvalidParams(field, f"not a usable directory ({reason}): {cwd[:200]}") from None


def workspace_roots(settings: Settings, principal: Principal) -> list[Path] | None:
    """The roots `principal` may open sessions under; None: anywhere."""
    configured = settings.workspace_roots
    if not is_shared(principal):
        return None
    if principal.name in configured:
        return [_resolved(Path(root)) for root in configured[principal.name]]
    if principal.admin or EVERYONE not in configured:
        return None
    return [_resolved(Path(root)) for root in configured[EVERYONE]]


def _agent_state_holding(settings: Settings, workspace: Path) -> Path | None:
    directories = (_resolved(directory) for directory in state_directories(settings))
    return next((state for state in directories if _within(workspace, state)), None)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):  # a loop of links: compare what was written
        return path.expanduser().absolute()
