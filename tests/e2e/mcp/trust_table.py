"""The MCP trust table the ACP and headless tests check: two copies of tests/e2e/mcp/annotated_server.py,
one marked `"trusted": true` in config.json and one not, and how each of their tools fares in each mode."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e.mcp.servers import REPO

MODES = ("default", "accept-edits", "read-only", "plan", "bypass-permissions")
# (server, tool) → what happens in each mode, in MODES order: run (unasked), ask (the four options),
# ask* (an infrastructure change: allow once / reject once, asked every time), refuse (not asked, not run).
# The tools: read_state says it only reads; annotate says nothing; rotate_keys says it destroys;
# terraform_apply's name says it applies; kubectl_delete says it only reads, and its name says it deletes.
TABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("trusted", "read_state"): ("run", "run", "run", "run", "run"),
    ("trusted", "annotate"): ("ask", "ask", "refuse", "refuse", "ask"),
    ("trusted", "rotate_keys"): ("ask*", "ask*", "refuse", "refuse", "ask*"),
    ("trusted", "terraform_apply"): ("ask*", "ask*", "refuse", "refuse", "ask*"),
    ("trusted", "kubectl_delete"): ("run", "run", "run", "run", "run"),  # the user vouches for its hints
    ("untrusted", "read_state"): ("run", "run", "refuse", "refuse", "ask"),
    ("untrusted", "annotate"): ("ask", "ask", "refuse", "refuse", "ask"),
    ("untrusted", "rotate_keys"): ("ask*", "ask*", "refuse", "refuse", "ask*"),
    ("untrusted", "terraform_apply"): ("ask*", "ask*", "refuse", "refuse", "ask*"),
    ("untrusted", "kubectl_delete"): ("ask*", "ask*", "refuse", "refuse", "ask*"),  # a claim does not cancel it
}


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def server_entry(name: str, calls: Path, *, trusted: bool | None = None) -> dict[str, Any]:
    """config.json's entry for the annotated server `name`, recording its calls in `calls`."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "tests.e2e.mcp.annotated_server", name],
        "env": {"PYTHONPATH": str(REPO), "ANNOTATED_CALLS": str(calls)},
    }
    if trusted is not None:
        entry["trusted"] = trusted
    return entry


def write_config(config_dir: Path, calls: Path) -> None:
    """A config dir whose config.json holds the trusted and the untrusted server."""
    config_dir.mkdir(parents=True, exist_ok=True)
    servers = {"trusted": server_entry("trusted", calls, trusted=True), "untrusted": server_entry("untrusted", calls)}
    (config_dir / "config.json").write_text(json.dumps({"mcpServers": servers}))


def ran(calls: Path) -> list[tuple[str, str]]:
    """The (server, tool) calls the servers recorded, in order; the record is emptied for the next run."""
    lines = calls.read_text().splitlines() if calls.exists() else []
    calls.write_text("")
    return [(server, tool) for server, tool in (line.split() for line in lines)]
