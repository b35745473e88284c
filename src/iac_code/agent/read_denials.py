"""The paths a session's `Read(…)` deny rules name, as they exist now: what the commands the agent starts
without asking (iac_plan's terraform, iac_check's checkers, a bound apply's plan) must not read. terraform
reads whatever its configuration names (`file("../secrets/key.txt")`), so the rule is enforced where the
program runs: the guard's namespace shows these paths empty (system/processes.unreadable_paths).

A rule's glob is taken as the read tools take it: relative to the workspace (`../x` leaves it), `~` the home,
a trailing `/` everything under it. Expanded at each call (the files that exist then), at most MAX_PATHS; a
folder hides what is under it.
"""

from __future__ import annotations

import glob
import itertools
import os
from pathlib import Path

from iac_code.agent.rules import Rules

MAX_PATHS = 2_000  # mounts per command; a rule matching more hides the first found


def denied_read_paths(rules: Rules) -> list[str]:
    """The existing paths the Read deny rules of `rules` match (absolute, symlinks resolved, folders first
    covering what is under them)."""
    found: list[str] = []
    for rule in rules.deny:
        if rule.pattern.kind == "Read" and not rule.pattern.subjects:
            found += _expanded(_body(rule.pattern.entry), rules.workspace)
    return _outermost(found)


def _body(entry: str) -> str:
    body = entry.strip().removeprefix("Read(").removesuffix(")").strip()
    return body + "**" if body.endswith("/") else body


def _expanded(pattern: str, workspace: Path) -> list[str]:
    pattern = os.path.expanduser(pattern)
    absolute = pattern if os.path.isabs(pattern) else os.path.join(workspace, pattern)
    # (`x/**` yields `x/` even where there is no x)
    matches = (path for path in glob.iglob(absolute, recursive=True, include_hidden=True) if os.path.lexists(path))
    return [os.path.realpath(path) for path in itertools.islice(matches, MAX_PATHS)]


def _outermost(paths: list[str]) -> list[str]:
    """`paths` without repeats and without those beneath another of them (sorted: a folder before its files)."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not kept or not (path == kept[-1] or path.startswith(kept[-1].rstrip("/") + "/")):
            kept.append(path)
    return kept[:MAX_PATHS]
