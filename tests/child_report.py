"""A program that tells how it was started: whether it leads a process group of its own, and the names of
the variables in its environment. A test puts it where the agent expects a program (ripgrep, a checker's CLI,
an interpreter) and reads the report in `<program>.report`, or in what the agent made of its output."""

from __future__ import annotations

import sys
from pathlib import Path

OWN_GROUP = "own-process-group"
AGENTS_GROUP = "in-the-starting-process-group"
VARIABLE = "variable:"

_SOURCE = f"""
import os, sys
lines = [{OWN_GROUP!r} if os.getpgid(0) == os.getpid() else {AGENTS_GROUP!r}]
lines += [{VARIABLE!r} + name for name in os.environ]
report = "\\n".join(lines) + "\\n"
with open(sys.argv[0] + ".report", "w") as handle:
    handle.write(report)
sys.stdout.write(report)
"""


def reporting_program(directory: Path, name: str = "report") -> Path:
    """An executable `directory/name` that reports on itself whatever its arguments."""
    program = directory / name
    program.write_text(f"#!{sys.executable}\n{_SOURCE}")
    program.chmod(0o755)
    return program


def report_of(program: Path) -> list[str]:
    """The report of the program's last run."""
    return Path(f"{program}.report").read_text().splitlines()
