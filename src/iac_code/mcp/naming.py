"""Names the model sees: `mcp__<server>__<tool>`, valid for every provider (`^[a-zA-Z0-9_-]{1,64}$`).

The server part never contains `__`, so the first `__` after `mcp__` always ends it and two servers
can never produce the same name. Servers whose names clean up alike ("my.server", "my server") get
a short hash of their real name appended, and so do tools within one server; so does anything that
would pass 64 characters. The hash depends only on the original name: a name is the same whichever
server connects first, and the same in every session.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME = 64
MAX_SERVER_PART = 24
HASH_CHARS = 6

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_UNDERSCORES = re.compile(r"_{2,}")


def server_parts(names: Iterable[str]) -> dict[str, str]:
    """Each configured server's name as it appears inside tool and command names."""
    cleaned = {name: _clean_server(name) for name in names}
    clashes = Counter(cleaned.values())
    return {
        name: part if clashes[part] == 1 else _with_hash(part, name, MAX_SERVER_PART, server=True)
        for name, part in cleaned.items()
    }


def qualified_names(server_part: str, names: Iterable[str]) -> dict[str, str]:
    """`mcp__<server_part>__<name>` for each of one server's tools (or prompts), all distinct."""
    prefix = f"{PREFIX}{server_part}{SEPARATOR}"
    cleaned = {name: _clip(prefix + (_UNSAFE.sub("_", name) or "_"), name) for name in names}
    clashes = Counter(cleaned.values())
    return {name: full if clashes[full] == 1 else _with_hash(full, name, MAX_NAME) for name, full in cleaned.items()}


def tool_title(display_name: str, server: str) -> str:
    """How a call of an MCP tool is titled for the client."""
    return f"{display_name} (MCP server {server})"


def title_from_name(name: str) -> str | None:
    """The title of a call of `mcp__<server>__<tool>` known only by that name (its server is not
    connected): the parts of the name; None for a name that is not an MCP tool's."""
    parts = name_parts(name)
    return tool_title(parts[1], parts[0]) if parts is not None else None


def name_parts(name: str) -> tuple[str, str] | None:
    """(server part, tool part) of `mcp__<server>__<tool>`; None for a name that is not an MCP tool's."""
    server, separator, tool = name.removeprefix(PREFIX).partition(SEPARATOR)
    if not name.startswith(PREFIX) or not separator or not server or not tool:
        return None
    return server, tool


def _clean_server(name: str) -> str:
    part = _UNDERSCORES.sub("_", _UNSAFE.sub("_", name)).strip("_") or "server"
    return part if len(part) <= MAX_SERVER_PART else _with_hash(part, name, MAX_SERVER_PART, server=True)


def _clip(text: str, original: str) -> str:
    return text if len(text) <= MAX_NAME else _with_hash(text, original, MAX_NAME)


def _with_hash(text: str, original: str, limit: int, *, server: bool = False) -> str:
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:HASH_CHARS]
    kept = text[: limit - HASH_CHARS - 1]
    if server:  # a server part must not end in "_", or "_" + hash would put a "__" inside it
        kept = kept.rstrip("_") or "server"
    return f"{kept}_{digest}"
