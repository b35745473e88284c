"""What the tools cost in a request with an MCP server of 10,000 tools, through the real agent over stdio
(scripted OpenAI-compatible model, the fixture MCP server with `--tools=10000`):

- without the search (IAC_CODE_TOOLS_SHARE set so high that every tool is listed);
- with it (the default share, 10 %): the first request, and the request after the model found 10 tools.

Each row prints the request body's bytes (its JSON as the agent sends it), its tools' bytes, their tokens
as compaction estimates them (~4 characters a token) and their share of the model's context window
(goal with the search: ≤ 10 %).

Run: .venv/bin/python bench/tool_share.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

# Replace the script directory with the repo root (as the other benchmarks do).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from tests.e2e.acp.wire import AgentProcess, model_env  # noqa: E402
from tests.e2e.mcp.servers import acp_form, fixture_server  # noqa: E402
from tests.e2e.mcp.through_agent import call, open_session  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402

from iac_code.agent.compaction import CHARS_PER_TOKEN  # noqa: E402
from iac_code.providers.presets import DEFAULT_CONTEXT_WINDOW  # noqa: E402

TOOLS = 10_000
WINDOW = DEFAULT_CONTEXT_WINDOW  # the scripted model's: an unknown model id gets the default
NEVER_SEARCH = "1000000"  # a share no tool list reaches


def _encoded(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # as the agent encodes a request


def _row(label: str, request: dict[str, Any]) -> str:
    body, tools = len(_encoded(request).encode()), _encoded(request.get("tools", []))
    tokens = len(tools) // CHARS_PER_TOKEN
    return (
        f"{label:<44} request {body / 1024:>9,.1f} KiB; {len(request.get('tools', [])):>6,} tools, "
        f"{len(tools.encode()) / 1024:>9,.1f} KiB ≈ {tokens:>9,} tokens = {100 * tokens / WINDOW:6.1f} % of {WINDOW:,}"
    )


def _requests(work: Path, model: ScriptedOpenAI, **env: str) -> list[dict[str, Any]]:
    """A session with the big server: one prompt in which the model searches once (when it can), then ends."""
    model.reset()
    agent = AgentProcess(model_env(model.url, work / "config", **env))
    agent.initialize()
    try:
        big = acp_form(fixture_server("big", f"--tools={TOOLS}"))
        session_id, _ = open_session(agent, work, [big], ready=["big"])
        searching = env.get("IAC_CODE_TOOLS_SHARE") != NEVER_SEARCH
        if searching:
            model.add(call("tool_search", query="snapshot volume", limit=10))
        model.add({"text": "done"})
        agent.prompt(session_id, "go")
    finally:
        agent.close(60)
    return list(model.requests)


def main() -> None:
    work = Path(tempfile.mkdtemp())
    with ScriptedOpenAI() as model:
        (without,) = _requests(work, model, IAC_CODE_TOOLS_SHARE=NEVER_SEARCH)
        first, after = _requests(work, model)
    print(f"An MCP server of {TOOLS:,} tools, the scripted model (context window {WINDOW:,} tokens):")
    print(_row("without the search, every request:", without))
    print(_row("with the search, before it (goal ≤ 10 %):", first))
    print(_row("with the search, 10 tools found:", after))


if __name__ == "__main__":
    main()
