"""Which file and line of a root module declare each changed address: `resource "t" "n"`, `data "t" "n"`,
the `module "m"` block an address inside a module comes from, and for a forgotten resource the `from` of
its `removed` block. A resource deleted because its block is gone has no line.

The files are the workspace's, so they are read like any other (`safe_read.read_beneath`: no symlink
followed, size capped) and only scanned line by line for block headers with anchored patterns (linear
time, no parser in the agent's process).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from iac_code.iac.safe_read import read_beneath
from iac_code.iac.sources import MAX_FILE_BYTES

HCL_SUFFIXES = (".tf", ".tofu")
_BLOCK = re.compile(r'\s*(resource|data)\s+"([^"]{1,200})"\s+"([^"]{1,200})"')
_MODULE = re.compile(r'\s*module\s+"([^"]{1,200})"')
_REMOVED_FROM = re.compile(r"\s*from\s*=\s*([A-Za-z0-9_.\-]{1,400})")
_INDEX = re.compile(r"\[[^\]]*\]")

# ("resource", type, name) | ("data", type, name) | ("module", name) | ("removed", address)
Declaration = tuple[str, ...]


def declaration_key(address: str) -> Declaration:
    """What declares `address` in the root module (instance keys dropped)."""
    plain = _INDEX.sub("", address)
    parts = plain.split(".")
    if parts[0] == "module" and len(parts) > 1:
        return ("module", parts[1])
    if parts[0] == "data" and len(parts) > 2:
        return ("data", parts[1], parts[2])
    return ("resource", *parts[:2])


def declarations(workspace: Path, directory: Path) -> dict[Declaration, tuple[Path, int]]:
    """Every block header the root module's files declare, with (file, 1-based line); the first wins."""
    found: dict[Declaration, tuple[Path, int]] = {}
    rel_dir = directory.relative_to(workspace)
    try:
        names = sorted(p.name for p in directory.iterdir() if p.name.endswith(HCL_SUFFIXES))
    except OSError:
        return found
    for name in names:
        rel = (rel_dir / name).as_posix()
        try:
            text = read_beneath(workspace, rel, MAX_FILE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue  # a symlink, a FIFO, too large, gone: no place to send an editor
        _scan(text, directory / name, found)
    return found


def _scan(text: str, path: Path, found: dict[Declaration, tuple[Path, int]]) -> None:
    in_removed = False
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _BLOCK.match(line):
            found.setdefault((match[1], match[2], match[3]), (path, number))
        elif match := _MODULE.match(line):
            found.setdefault(("module", match[1]), (path, number))
        elif line.lstrip().startswith("removed"):
            in_removed = True
        elif in_removed and (match := _REMOVED_FROM.match(line)):
            found.setdefault(("removed", _INDEX.sub("", match[1])), (path, number))
            in_removed = False


def address_locations(
    workspace: Path, directory: Path, changes: Iterable[tuple[str, str]], limit: int
) -> list[tuple[Path, int]]:
    """(file, line) for each (address, action) in order, without repeats, at most `limit`."""
    known = declarations(workspace, directory)
    locations: list[tuple[Path, int]] = []
    for address, action in changes:
        key: Declaration = ("removed", _INDEX.sub("", address)) if action == "forget" else declaration_key(address)
        where = known.get(key)
        if where is not None and where not in locations:
            locations.append(where)
            if len(locations) == limit:
                break
    return locations
