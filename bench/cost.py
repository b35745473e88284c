"""What prompt caching saves: a scripted 30-turn session with tool calls over ACP (the real `iac-code acp`
process), against the scripted OpenAI-style and Anthropic servers, which simulate their APIs' prompt
caches (tests/fakes/prompt_cache.py; 4 characters a token). Prints, for each API shape, the input tokens
of the session, those billed at full price without caching and with it, and the share read from the
cache, over the session and on its last turn (goal: ≥ 70 % by turn 30).

Run: .venv/bin/python bench/cost.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from tests.e2e.acp.wire import AgentProcess, model_env  # noqa: E402
from tests.fakes.anthropic_server import ScriptedAnthropic  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI, ScriptedServer  # noqa: E402

TURNS = 30
MODULE = 'resource "aws_subnet" "private_%d" {\n  vpc_id     = aws_vpc.main.id\n  cidr_block = "10.0.%d.0/24"\n}\n'


def _session(server: ScriptedServer, work: Path, **env: str) -> list[dict[str, int]]:
    """The prompt responses' usage, turn by turn."""
    (work / "main.tf").write_text("".join(MODULE % (i, i) for i in range(12)))
    agent = AgentProcess(model_env(server.url, work / "config", **env))
    try:
        agent.initialize()
        session_id = agent.new_session(work)
        usages = []
        for turn in range(TURNS):
            server.add(
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]},
                {
                    "text": f"Turn {turn}: main.tf declares twelve private subnets of the VPC; subnet {turn % 12} is next."
                },
            )
            response, _ = agent.prompt(session_id, f"Turn {turn}: which subnet should the next change touch?")
            usages.append(response["result"]["usage"])
        return usages
    finally:
        agent.close()


def _report(shape: str, usages: list[dict[str, int]]) -> None:
    total = sum(u["inputTokens"] for u in usages)
    read = sum(u["cachedReadTokens"] for u in usages)
    written = sum(u["cachedWriteTokens"] for u in usages)
    last = usages[-1]
    print(f"{shape}: {TURNS} turns, {2 * TURNS} model calls, {total:,} input tokens")
    print(f"  billed at full price without caching: {total:,}")
    print(f"  billed at full price with caching:    {total - read - written:,} (+ {written:,} written to the cache)")
    print(f"  read from the cache: {read:,} = {100 * read / total:.1f} % of the session's input")
    print(
        f"  turn {TURNS}: {100 * last['cachedReadTokens'] / last['inputTokens']:.1f} % of its input read from the cache"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        with ScriptedOpenAI() as openai:
            (work / "openai").mkdir()
            _report("OpenAI-style (automatic prefix cache)", _session(openai, work / "openai"))
        with ScriptedAnthropic() as anthropic:
            (work / "anthropic").mkdir()
            usages = _session(
                anthropic,
                work / "anthropic",
                IAC_CODE_PROVIDER="anthropic_compatible",
                IAC_CODE_MODEL="claude-scripted",
            )
            _report("Anthropic (cache_control breakpoints)", usages)


if __name__ == "__main__":
    main()
