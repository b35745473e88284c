"""The files of a workspace worth looking at, listed by ripgrep: .gitignore honoured, bounded, fast.

ripgrep (bundled with the project) walks in parallel and applies every .gitignore, .ignore and
.git/info/exclude the way git does, even outside a git checkout. `.terraform/` (provider binaries and
downloaded modules), `node_modules/` and the agent's own state (system/own_state.py: a workspace may hold the
config dir) are never entered. It lists regular files only (no symlinks, FIFOs
or devices); files over the size cap are listed, so that the reader can count them as left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iac_code.system.own_state import is_kept_out, ripgrep_exclusions
from iac_code.system.processes import command_environment, run
from iac_code.system.ripgrep import COMMON_FLAGS, MISSING, find_ripgrep

MAX_FILES = 20_000
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


class WalkFailed(Exception):
    """The files could not be listed (ripgrep missing, failing or too slow); the message says why."""


@dataclass(frozen=True)
class Candidates:
    paths: list[Path]  # absolute, sorted, at most the limit
    beyond_limit: int  # how many more the walk found


def list_candidate_files(directory: Path, limit: int | None = None) -> list[Path]:
    """Absolute paths of the infrastructure candidates under `directory`, sorted, at most `limit`."""
    return walk_candidates(directory, limit).paths


def walk_candidates(directory: Path, limit: int | None = None) -> Candidates:
    """The infrastructure candidates under `directory`: the first `limit` (default MAX_FILES) in sorted
    order, and how many were left out beyond it."""
    limit = MAX_FILES if limit is None else limit
    if is_kept_out(directory.resolve()):
        return Candidates([], 0)
    flags = [
        "--files",
        *COMMON_FLAGS,
        "--glob-case-insensitive",
        *(f"--glob={glob}" for glob in CANDIDATE_GLOBS),
        *(f"--glob={glob}" for glob in EXCLUDED_GLOBS),
        *ripgrep_exclusions(directory.resolve()),
    ]
    ripgrep = find_ripgrep()
    if ripgrep is None:
        raise WalkFailed(MISSING)
    try:
        # Unguarded: ripgrep starts no program (no --pre), so there is nothing for the guard's shims to meet.
        listing = run([ripgrep, *flags], env=command_environment(guarded=False), cwd=directory, timeout=WALK_TIMEOUT)
    except TimeoutError:
        raise WalkFailed(f"listing the files under {directory} took over {WALK_TIMEOUT:.0f} s") from None
    if listing.code > 1:
        raise WalkFailed(f"cannot list files: {listing.stderr.decode(errors='replace').strip()}")
    names = sorted(line for line in listing.stdout.decode("utf-8", errors="replace").splitlines() if line)
    return Candidates([directory / name for name in names[:limit]], max(0, len(names) - limit))
