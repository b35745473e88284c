"""Which tools a model call offers: every built-in tool, and the session's MCP tools — all of them while
the tools' schemas fit in `share` of the context window, else only those the model found with
`tool_search` (agent/tool_search.py), which is then offered too.

A server of 10,000 tools would otherwise put ~1.3 M tokens of schemas into every request. Sizes are
estimated as compaction estimates the context (agent/compaction.py: ~4 characters a token, no tokenizer).

The offered list changes as rarely as it can, for the providers' prompt caches (a request's prefix must
stay byte-identical): the built-in tools first, then `tool_search`, then the tools found, in the order
they were found; a found tool stays offered for the rest of the session (while its server offers it),
unless the offered tools would pass the share, in which case the search describes it in its result
instead. Every MCP tool can be called whether it is offered or not (a model that guesses a name): it is
judged as always (mcp/access.py), without joining the offer. What was found is read back from the
history's `tool_search` results, so a loaded session offers the same tools.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from typing import Any

from iac_code.agent.compaction import CHARS_PER_TOKEN
from iac_code.agent.tool_search import TOOL_NAME, Entry, Match, Placement, ToolSearchTool, entries_of, rank
from iac_code.mcp.naming import name_parts
from iac_code.messages import Message
from iac_code.tools.base import Tool

DEFAULT_SHARE = 0.10
SERVERS_NAMED = 20  # in the search tool's description; more are counted, not named


def schema_chars(tool: Tool) -> int:
    """The characters one tool's schema takes in a request (as JSON: name, description, parameters)."""
    schema: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return len(json.dumps(schema, ensure_ascii=False))


def found_in(history: Iterable[Message]) -> list[str]:
    """The tools `tool_search` offered in `history`, in the order it offered them."""
    found: dict[str, None] = {}
    for message in history:
        raw = message.shown.raw_output if message.role == "tool" and message.shown is not None else None
        if message.tool_name == TOOL_NAME and isinstance(raw, dict) and isinstance(raw.get("offered"), list):
            found.update((name, None) for name in raw["offered"] if isinstance(name, str))
    return list(found)


class ToolOffer:
    """The tools of one loop: `tools` (what the model may call) and `offered()` (what a call lists),
    brought up to date by `refresh(context_window)` before every model call."""

    def __init__(
        self,
        builtins: dict[str, Tool],
        catalogue: Callable[[], Iterable[Tool]] | None = None,
        *,
        share: float = DEFAULT_SHARE,
        found: Iterable[str] = (),
    ) -> None:
        self.builtins = builtins
        self._source = catalogue  # the MCP tools on offer now (they come and go with their servers)
        self.share = share
        self.found: list[str] = list(dict.fromkeys(found))  # by tool_search, in order
        self.catalogue: dict[str, Tool] = {}  # the MCP tools, by name (none named like a built-in)
        self.searching = False
        self.tools: dict[str, Tool] = dict(builtins)
        self._search = ToolSearchTool(self.find)
        self._budget = 0  # characters the offered schemas may take
        self._builtin_chars = sum(schema_chars(tool) for tool in builtins.values())
        self._sized: list[Tool] = []  # the catalogue `_catalogue_chars` and `_entries` were made from
        self._catalogue_chars = 0
        self._description = ""  # the search's, naming the catalogue's servers
        # the ranking's view of a catalogue (made on its first search), and the catalogue it was made from
        self._entries: tuple[dict[str, Tool], list[Entry]] | None = None

    def refresh(self, context_window: int) -> None:
        """Take the MCP tools as they are now, and decide whether they are searched or all offered."""
        extra = [] if self._source is None else list(self._source())
        if extra != self._sized:  # the same tool objects (the hub builds them once): sizes are still right
            self._sized = extra
            self.catalogue = {tool.name: tool for tool in extra if tool.name not in self.builtins}
            self.catalogue.pop(TOOL_NAME, None)
            self._catalogue_chars = sum(schema_chars(tool) for tool in self.catalogue.values())
            self._description = _search_description(self.catalogue)
        self._budget = int(self.share * context_window * CHARS_PER_TOKEN)
        self.searching = bool(self.catalogue) and self._builtin_chars + self._catalogue_chars > self._budget
        if self.searching:
            self._search.description = self._description
            self.tools = {**self.builtins, TOOL_NAME: self._search, **self.catalogue}
        else:
            self.tools = {**self.builtins, **self.catalogue}

    def offered(self) -> list[Tool]:
        """The tools a model call lists, in their stable order."""
        if (
            not self.searching
        ):  # by name: the list is part of the prompt's cached prefix, whichever server answered first
            return [*self.builtins.values(), *sorted(self.catalogue.values(), key=lambda tool: tool.name)]
        found = [self.catalogue[name] for name in self.found if name in self.catalogue]
        return [*self.builtins.values(), self._search, *found]

    def forget_found(self) -> None:
        """The conversation was cleared: what it found goes with it."""
        self.found.clear()

    async def find(self, query: str, limit: int) -> list[Match]:
        """The best `limit` MCP tools for `query`; those not offered yet join the offer while it has room.
        Ranking 10,000 tools takes tens of milliseconds (and indexing them, once, most of a second on a
        busy machine): both run in a thread, so the session's other work goes on."""
        catalogue = self.catalogue
        if self._entries is None or self._entries[0] is not catalogue:
            pairs = [(tool.name, tool.description) for tool in catalogue.values()]
            self._entries = (catalogue, await asyncio.to_thread(entries_of, pairs))
        names = await asyncio.to_thread(rank, query, self._entries[1], limit)
        return self._place([catalogue[name] for name in names])

    def _place(self, tools: list[Tool]) -> list[Match]:
        room = self._budget - sum(schema_chars(tool) for tool in self.offered())
        matches = []
        for tool in tools:
            name = tool.name
            placement: Placement = "already offered" if name in self.found else "offered"
            if placement == "offered":
                if schema_chars(tool) > room:
                    placement = "described"
                else:
                    room -= schema_chars(tool)
                    self.found.append(name)
            matches.append(Match(name, tool.description, tool.parameters, placement))
        return matches


def _search_description(catalogue: dict[str, Tool]) -> str:
    servers: dict[str, int] = {}
    for name in catalogue:
        server = (name_parts(name) or ("other", ""))[0]
        servers[server] = servers.get(server, 0) + 1
    named = ", ".join(f"{server} ({count:,})" for server, count in list(servers.items())[:SERVERS_NAMED])
    more = f" and {len(servers) - SERVERS_NAMED} more" if len(servers) > SERVERS_NAMED else ""
    return (
        f"Find tools of the connected MCP servers by name or description. They have {len(catalogue):,} tools "
        f"(servers: {named}{more}), too many to list here: search with a few words of what you need, "
        "or a tool's exact name; the tools found are offered from your next step. The built-in tools "
        "are always offered."
    )
