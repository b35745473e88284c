"""The agent's own state, out of the tools' reach: the config dir (the database and its WAL and SHM, tokens,
plans, trusted projects, what a sign-in stored) and the tokens file wherever it is configured.

Set once at start-up (cli.py calls `keep_out(settings)`, as it installs guard/'s hook into
processes.command_environment): guarded commands see none of it (an empty folder), the file tools refuse
a path there (tools/workspace.confined), list_files leaves it out, and grep, glob and iac_check's walk
skip it (`ripgrep_exclusions`), so a workspace that holds the config dir (a session opened in `$HOME`)
shows nothing of it.

Why the database above all: SQLite's locks are POSIX locks, held per process and dropped when *any*
descriptor of the file is closed. A tool that opened and closed `iac-code.db` in the server process would
drop the server's locks; the next process to open it (the operator's `iac-code audit`) would then take the
WAL for abandoned and delete it under the live server, whose later writes go to an unlinked file and are
lost on a crash. So the path is refused before anything opens it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from iac_code.config import Settings

SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")

_kept_out: tuple[Path, ...] = ()
_shown: tuple[Path, ...] = ()


def own_state_paths(settings: Settings) -> list[Path]:
    """Where `settings` keep the agent's own state: the config dir, the database and its side files, the
    sessions directory and the tokens file (each may be configured apart from the others)."""
    store = settings.store_path
    return [
        settings.config_dir,
        store,
        *(store.with_name(store.name + suffix) for suffix in SQLITE_SIDE_FILES),
        settings.sessions_dir,
        settings.tokens_path,
    ]


def state_directories(settings: Settings) -> list[Path]:
    """The directories that hold `own_state_paths`: no session is opened in them (host/workspaces.py)."""
    return [settings.config_dir, settings.sessions_dir, settings.store_path.parent, settings.tokens_path.parent]


def keep_out(settings: Settings) -> None:
    """From now on, no tool of this process reaches the state `settings` name, and no guarded command it
    starts reads it (in namespace mode: guard/shims.py masks `kept_out()`), but for the user's skills, whose
    scripts commands run (`shown_to_commands()`; the folder is skills/discovery.USER_SKILL_DIR, not imported
    here: it loads yaml, 60 ms of every start)."""
    keep_out_paths(own_state_paths(settings), [settings.config_dir / "skills"])


def keep_out_paths(paths: Iterable[Path], shown: Iterable[Path] = ()) -> None:
    global _kept_out, _shown
    _kept_out = _resolved(paths)
    _shown = _resolved(shown)


def kept_out() -> tuple[Path, ...]:
    return _kept_out


def shown_to_commands() -> tuple[Path, ...]:
    """The paths inside the agent's state a command still sees (the user's skills)."""
    return _shown


def _resolved(paths: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(p).expanduser().resolve() for p in paths))


def is_kept_out(path: Path) -> bool:
    """Whether the absolute, symlink-free `path` is, or lies inside, the agent's own state."""
    return any(path == kept or kept in path.parents for kept in _kept_out)


def ripgrep_exclusions(directory: Path) -> list[str]:
    """ripgrep flags that leave out the agent's own state below `directory` (absolute, symlink-free), which
    ripgrep is run in; a search of a directory inside it is the caller's to refuse."""
    flags = []
    for kept in _kept_out:
        if kept != directory and directory in kept.parents:
            flags.append("--glob=!/" + _escaped(kept.relative_to(directory).as_posix()))
    return flags


def _escaped(text: str) -> str:
    return "".join("\\" + char if char in "\\*?[]{}!" else char for char in text)
