"""Reading a session log back: tolerate a torn last line, answer tool calls a crash left open."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from iac_code.messages import Message, tool_result, unanswered_tool_calls
from iac_code.safe_json import loads
from iac_code.sessions.records import message_from_data

logger = logging.getLogger(__name__)

INTERRUPTED = "Tool call interrupted: the session ended before it finished."


def parse_log(data: bytes) -> tuple[list[Message], bool, bool]:
    """The messages of a raw log, whether it ended in a torn line, and whether a middle line was bad."""
    *lines, tail = data.split(b"\n")
    messages, bad_line = parse_lines(lines)
    return messages, bool(tail), bad_line


def parse_lines(lines: Iterable[bytes | str]) -> tuple[list[Message], bool]:
    """The messages of a log's lines (one JSON message each), and whether any line was unreadable
    (dropped with a warning)."""
    messages: list[Message] = []
    bad_line = False
    for number, line in enumerate(lines, 1):
        try:
            messages.append(message_from_data(loads(line)))
        except (ValueError, TypeError, KeyError, AttributeError):
            logger.warning("dropping unreadable line %d of a session log", number)
            bad_line = True
    return messages, bad_line


def with_interrupted_results(history: list[Message]) -> tuple[list[Message], bool]:
    """The history with an "interrupted" result for every unanswered tool call, each placed after
    its assistant message and that message's existing results; and whether any landed mid-history."""
    unanswered = {call.id for call in unanswered_tool_calls(history)}
    repaired: list[Message] = []
    pending: list[Message] = []
    in_middle = False
    for message in history:
        if pending and message.role != "tool":
            repaired.extend(pending)
            pending, in_middle = [], True
        repaired.append(message)
        if message.role == "assistant":
            pending += [tool_result(c, INTERRUPTED, is_error=True) for c in message.tool_calls if c.id in unanswered]
    repaired.extend(pending)
    return repaired, in_middle
