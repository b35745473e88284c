"""`tool_search`: the model looks up MCP tools by name or description when they are too many to list
(agent/tool_offer.py decides when, and offers what it finds from the next model call on).

Ranking is by words: each word of the query scores where it is found in a tool — in its name (3), as the
start of a word of its name or the other way round ("snap" / "snapshots" and "snapshot", 2), in its
server's name or its description (1) — and a query that is a tool's exact name puts that tool first.
Ties keep the servers' order. No embeddings, nothing downloaded: names and descriptions are what the
model will read anyway.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from iac_code.mcp.access import name_words
from iac_code.mcp.naming import name_parts
from iac_code.tools.base import Category, Kind, ToolContext, ToolError, ToolResult, integer_arg, required_text

TOOL_NAME = "tool_search"
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
DESCRIPTION_CHARS = 200  # of each found tool's description, in the result

IN_NAME, NAME_PREFIX, ELSEWHERE, EXACT = 3, 2, 1, 1_000
MIN_PREFIX = 3  # shorter words only count whole ("s3" must not match every word starting with s)
# Words that would match half the descriptions and say nothing of what a tool does.
STOP_WORDS = frozenset({"a", "an", "and", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "the", "to"})

# How a found tool reaches the model: offered from the next call, offered already, or only described in
# the result because the offered tools already fill their share of the context window.
Placement = Literal["offered", "already offered", "described"]


@dataclass(frozen=True)
class Match:
    name: str
    description: str
    parameters: dict[str, Any]
    placement: Placement


@dataclass(frozen=True)
class Entry:
    """One tool as the ranking sees it."""

    name: str
    exact: frozenset[str]  # the names that, typed as the query, find it first
    name_words: frozenset[str]
    other_words: frozenset[str]  # its server's name and its description

    @classmethod
    def of(cls, name: str, description: str) -> Entry:
        server, own = name_parts(name) or ("", name)
        return cls(
            name,
            frozenset({name.lower(), own.lower()}),
            frozenset(name_words(own)),
            frozenset(name_words(server)) | frozenset(name_words(description)),
        )

    def score(self, query: str, words: Iterable[str]) -> int:
        total = EXACT if query in self.exact else 0
        for word in words:
            if word in self.name_words:
                total += IN_NAME
            elif len(word) >= MIN_PREFIX and any(_prefixes(word, own) for own in self.name_words):
                total += NAME_PREFIX
            elif word in self.other_words:
                total += ELSEWHERE
        return total


def _prefixes(word: str, own: str) -> bool:
    return len(own) >= MIN_PREFIX and (own.startswith(word) or word.startswith(own))


def query_words(query: str) -> list[str]:
    """The words of a query that count, each once, in order."""
    return list(dict.fromkeys(word for word in name_words(query) if word not in STOP_WORDS))


def entries_of(tools: Iterable[tuple[str, str]]) -> list[Entry]:
    """The ranking's view of (name, description) pairs (~40 µs a tool: made once, off the event loop)."""
    return [Entry.of(name, description) for name, description in tools]


def rank(query: str, entries: list[Entry], limit: int) -> list[str]:
    """The names of the best `limit` matches of `query`, best first (ties in `entries`' order)."""
    exact, words = query.strip().lower(), query_words(query)
    scored = [(entry.score(exact, words), index) for index, entry in enumerate(entries)]
    best = sorted((pair for pair in scored if pair[0] > 0), key=lambda pair: (-pair[0], pair[1]))
    return [entries[index].name for _, index in best[:limit]]


class ToolSearchTool:
    """The search as a tool. `find(query, limit)` is the session's tool offer: it ranks and offers."""

    name = TOOL_NAME
    category: Category = "read"
    kind: Kind = "search"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "A few words of what the tool should do (e.g. 'snapshot volume'), or its exact name.",
            },
            "limit": {
                "type": "integer",
                "description": f"How many tools at most (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).",
            },
        },
        "required": ["query"],
    }

    def __init__(self, find: Callable[[str, int], Awaitable[list[Match]]]) -> None:
        self._find = find
        self.description = ""  # set by the offer: it names how many tools there are, and whose

    def title(self, args: dict[str, Any]) -> str:
        query = args.get("query")
        return f"Search MCP tools: {query}" if isinstance(query, str) and query else "Search MCP tools"

    def access(self, args: dict[str, Any]) -> Literal["read"]:
        return "read"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = required_text(args, "query", blank_ok=False)
        limit = integer_arg(args, "limit", DEFAULT_LIMIT, low=1, high=MAX_LIMIT, clamp=True)
        matches = await self._find(query, limit)
        if not matches:
            raise ToolError(f"No MCP tool matches {query!r}: try other words, or fewer.")
        offered = [match.name for match in matches if match.placement == "offered"]
        raw = {"query": query, "matches": [match.name for match in matches], "offered": offered}
        return ToolResult(found_text(matches), raw_output=raw)


def found_text(matches: list[Match]) -> str:
    lines = [f"Found {len(matches)} MCP tool{'s' if len(matches) > 1 else ''}, best first:"]
    for match in matches:
        description = " ".join(match.description.split())
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1] + "…"
        lines.append(f"- {match.name}: {description}")
        if match.placement == "described":
            arguments = json.dumps(match.parameters, ensure_ascii=False)
            lines.append(f"  (not offered, the list is full: call it by name; arguments: {arguments})")
    if any(match.placement != "described" for match in matches):
        lines.append("The tools listed are offered from your next step: call them by name.")
    return "\n".join(lines)
