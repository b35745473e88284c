"""What every module of tools/ may use, beneath the tool contract (base.py, which re-exports both): the error
a call fails with, and the cap on what one call returns. Where tools act (backends.py) and the helpers it
runs on (confined_io, file_work, local_shell, workspace) import these from here, never base.py, which builds
a call's context on backends.py."""

from __future__ import annotations

# Default cap on what one tool result may put into the model's context.
MAX_OUTPUT_CHARS = 30_000


class ToolError(Exception):
    """A failure the model should see as an error result (bad path, timeout, bad arguments)."""
