"""What a program handed a whole directory would open, checked before it is handed one.

terraform validate and tflint read every `.tf`/`.tfvars` file of a directory themselves (and its lock
file, `.terraform/modules/modules.json`...); checkov's Helm runner renders a whole chart with `helm`. A
FIFO among those files blocks the program for its whole timeout, a symlink to /dev/zero or a huge file
makes it allocate gigabytes. So the directory is listed without following symlinks, each such file is
judged by `safe_read.file_problem` and the size cap, and a directory with a problem is not handed over.
The listing and the program's own open are not atomic: what slips between them is bounded by the
program's own limits, not by this check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from iac_code.iac import sources
from iac_code.iac.safe_read import file_problem, read_beneath

# What terraform/tofu validate and tflint read in a directory: configuration, variables, test files (also
# under tests/: validate loads them), OpenTofu's own extensions.
TERRAFORM_SUFFIXES = (
    ".tf",
    ".tf.json",
    ".tfvars",
    ".tfvars.json",
    ".tftest.hcl",
    ".tftest.json",
    ".tfmock.hcl",
    ".tfmock.json",
    ".tofu",
    ".tofu.json",
)
TERRAFORM_NAMES = (".terraform.lock.hcl", ".tflint.hcl")
TERRAFORM_TESTS = "tests"
MODULES_DIR = PurePosixPath(".terraform/modules")
MODULES_JSON = f"{MODULES_DIR}/modules.json"
TERRAFORM_STATE = (MODULES_JSON, ".terraform/environment", ".terraform/terraform.tfstate")
MAX_CHART_ENTRIES = 5_000  # a chart is tens of files: past this it is not one

Problem = tuple[str, str]  # (path relative to the directory, why it must not be handed to a program)


def terraform_dir_problems(directory: Path) -> list[Problem]:
    """The files terraform or tflint would read in `directory` that must not be handed to them."""
    names = [name for name in _names(directory) if name.endswith(TERRAFORM_SUFFIXES) or name in TERRAFORM_NAMES]
    tests = directory / TERRAFORM_TESTS
    if tests.is_dir() and not tests.is_symlink():
        names.extend(f"{TERRAFORM_TESTS}/{name}" for name in _names(tests) if name.endswith(TERRAFORM_SUFFIXES))
    for module in _downloaded_modules(directory):
        names.extend(f"{module}/{name}" for name in _names(directory / module) if name.endswith(TERRAFORM_SUFFIXES))
    names.extend(name for name in TERRAFORM_STATE if os.path.lexists(directory / name))
    return [(name, reason) for name in sorted(names) if (reason := _problem(directory / name))]


def tree_problems(directory: Path) -> list[Problem]:
    """Every file under `directory` (a Helm chart, rendered whole) that must not be handed to a program."""
    problems: list[Problem] = []
    seen = 0
    for parent, dirs, files in os.walk(directory):  # never follows symlinked directories
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(parent, d)))]:
            seen += 1
            if seen > MAX_CHART_ENTRIES:
                return [*problems, (".", f"more than {MAX_CHART_ENTRIES:,} files")]
            path = Path(parent, name)
            reason = _problem(path)
            if reason:
                problems.append((path.relative_to(directory).as_posix(), reason))
    return problems


def linked_files(directory: Path) -> str:
    """The symlinks among `directory`'s Terraform files with their targets' stamps: terraform follows them,
    so a unit's cache key must change when their targets do."""
    stamps = []
    for name in _names(directory):
        path = directory / name
        if name.endswith(TERRAFORM_SUFFIXES) and path.is_symlink():
            try:
                target = path.stat()
            except OSError:
                continue
            stamps.append(f"{name}->{os.readlink(path)}:{target.st_mtime_ns}:{target.st_size}")
    return "\0".join(sorted(stamps))


def _downloaded_modules(directory: Path) -> list[str]:
    """The module directories `terraform init` recorded in .terraform/modules/modules.json (validate reads
    them): relative paths inside .terraform/modules, reached without a symlink."""
    try:
        modules = json.loads(read_beneath(directory, MODULES_JSON, sources.MAX_FILE_BYTES)).get("Modules") or []
    except (OSError, ValueError, AttributeError):
        return []
    found = set()
    for module in modules:
        path = PurePosixPath(str(module.get("Dir", "")) if isinstance(module, dict) else "")
        absolute = directory / path
        inside = path.is_relative_to(MODULES_DIR) and path != MODULES_DIR and ".." not in path.parts
        if inside and absolute.is_dir() and absolute.resolve() == absolute.absolute():
            found.add(path.as_posix())
    return sorted(found)


def _names(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [entry.name for entry in entries if not entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _problem(path: Path) -> str | None:
    problem = file_problem(path)
    if problem is not None:
        return problem
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    cap = sources.MAX_FILE_BYTES
    return f"larger than {cap:,} bytes ({size:,})" if size > cap else None
