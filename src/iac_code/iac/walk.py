"""The files of a workspace worth looking at, listed by ripgrep: .gitignore honoured, bounded, fast.

ripgrep (bundled with the project) walks in parallel and applies every .gitignore, .ignore and
.git/info/exclude the way git does, even outside a git checkout. `.terraform/` (provider binaries and
downloaded modules) and `node_modules/` are never entered.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from iac_code.tools.base import ToolError
from iac_code.tools.search import COMMON_FLAGS, ripgrep_path

MAX_FILES = 20_000
MAX_FILE_BYTES = 2 * 1024 * 1024  # a larger "template" is generated data, not something to check
WALK_TIMEOUT = 10.0

# Only names that may be infrastructure: the rest of the tree is never listed.
CANDIDATE_GLOBS = [
    "*.tf",
    "*.tf.json",
    "*.tfvars",
    "*.tfvars.json",
    "*.hcl",
    "*.yaml",
    "*.yml",
    "*.json",
    "*.template",
    "*.ros",
    "Dockerfile",
    "Dockerfile.*",
    "*.dockerfile",
    "Containerfile",
    "Kustomization",
]
EXCLUDED_GLOBS = ["!.terraform", "!node_modules", "!.terragrunt-cache"]


def list_candidate_files(directory: Path, limit: int = MAX_FILES) -> list[Path]:
    """Absolute paths of the infrastructure candidates under `directory`, sorted, at most `limit`."""
    flags = [
        "--files",
        *COMMON_FLAGS,
        "--glob-case-insensitive",
        f"--max-filesize={MAX_FILE_BYTES}",
        *(f"--glob={glob}" for glob in CANDIDATE_GLOBS),
        *(f"--glob={glob}" for glob in EXCLUDED_GLOBS),
    ]
    try:
        listing = subprocess.run(
            [ripgrep_path(), *flags],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=WALK_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolError(f"listing the files under {directory} took over {WALK_TIMEOUT:.0f} s") from None
    if listing.returncode > 1:
        raise ToolError(f"cannot list files: {listing.stderr.decode(errors='replace').strip()}")
    names = sorted(line for line in listing.stdout.decode("utf-8", errors="replace").splitlines() if line)
    return [directory / name for name in names[:limit]]
