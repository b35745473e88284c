"""The session option "check IaC files after each edit" (options.CHECK_EDITS): after the model's calls that
wrote infrastructure files, the loop checks them itself (one iac_check call, made on the user's behalf like
/check and kept in the history), so the model reads the findings before its next step instead of having to
remember to ask.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from iac_code.iac.classify import is_candidate
from iac_code.messages import Message, ToolCall
from iac_code.tools.iac_check import path_check_call

_WRITING_TOOLS = frozenset({"write_file", "edit_file"})


def edits_check(calls: Iterable[ToolCall], history: list[Message]) -> ToolCall | None:
    """One iac_check call on what `calls` wrote successfully that may be infrastructure (the file, or the
    directory the files share); None when they wrote none."""
    failed = {m.tool_call_id for m in history if m.role == "tool" and m.is_error}
    written = sorted(
        {
            posixpath.normpath(path)
            for call in calls
            if call.name in _WRITING_TOOLS
            and call.id not in failed
            and isinstance(path := call.arguments.get("path"), str)
            and is_candidate(posixpath.basename(path))
        }
    )
    if not written:
        return None
    return path_check_call(written[0] if len(written) == 1 else posixpath.commonpath(written) or ".")
