"""`.terraform.lock.hcl`: its digest (the cache key) and the provider versions it pins.

The file is written by `terraform init` in one plain shape (`provider "ADDRESS" {` … `version = "X"` …
`}`), so it is read with a pattern rather than an HCL parser. It is read like every workspace file a hostile
repository controls (iac/safe_read.py: no symlink followed, no FIFO waited on, size capped).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from iac_code.iac.safe_read import read_beneath

LOCK_FILE = ".terraform.lock.hcl"
MAX_BYTES = 4 << 20  # a lock file is a few kB per provider
_PROVIDER = re.compile(r'^provider\s+"([^"]+)"\s*\{(.*?)^\}', re.MULTILINE | re.DOTALL)
_VERSION = re.compile(r'^\s*version\s*=\s*"([^"]*)"', re.MULTILINE)


@dataclass(frozen=True)
class LockFile:
    sha256: str
    versions: dict[str, str] = field(default_factory=dict)  # provider source address → pinned version


def read_lock_file(workspace: Path, relative_directory: str) -> LockFile | None:
    """The lock file of the module at `relative_directory` (POSIX, "." for the workspace), None if it has
    none; OSError (safe_read.UnsafeFile) when it cannot be read safely."""
    rel = LOCK_FILE if relative_directory in ("", ".") else f"{relative_directory}/{LOCK_FILE}"
    try:
        data = read_beneath(workspace, rel, MAX_BYTES)
    except FileNotFoundError:
        return None
    return LockFile(hashlib.sha256(data).hexdigest(), pinned_versions(data.decode("utf-8", "replace")))


def pinned_versions(text: str) -> dict[str, str]:
    versions = {}
    for match in _PROVIDER.finditer(text):
        if version := _VERSION.search(match.group(2)):
            versions[match.group(1)] = version.group(1)
    return versions
