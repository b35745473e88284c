"""Benchmark `iac-code acp` over stdio against an instant scripted model; prints medians.

Run: .venv/bin/python bench/stdio.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from tests.e2e.acp.wire import AgentProcess, answer_text, model_env  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402

RUNS = 5
IDLE_SESSIONS = 200
ANSWER_BYTES = 5_000_000


def _layer_throughput(work: Path) -> float:
    """Streaming through our own code only: loop, channel, updates, stdio (scripted provider in-process)."""
    script = work / "big.json"
    script.write_text(json.dumps({"replies": [{"text": "z" * ANSWER_BYTES, "chunk_chars": 4096}]}))
    env = model_env(
        "http://127.0.0.1:9",
        work / "config",
        IAC_CODE_PROVIDER="scripted",
        IAC_CODE_SCRIPT=str(script),
        IAC_CODE_CONTEXT_WINDOW="100000000",  # no compaction: this measures streaming alone
    )
    agent = AgentProcess(env)
    agent.initialize()
    session_id = agent.new_session(work)
    agent.prompt(session_id, "warm up")
    figures = []
    for _ in range(RUNS):
        started = time.perf_counter()
        _, seen = agent.prompt(session_id, "big")
        figures.append(ANSWER_BYTES / (time.perf_counter() - started) / 1e6)
        assert len(answer_text(seen)) == ANSWER_BYTES
        agent.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "/clear"}]})
    agent.close()
    return statistics.median(figures)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> None:
    work = Path(tempfile.mkdtemp())
    with ScriptedOpenAI(default={"text": "ok"}) as model:
        env = model_env(model.url, work / "config")
        cold, new, round_trip, throughput, per_session = [], [], [], [], []
        for _ in range(RUNS):
            started = time.perf_counter()
            agent = AgentProcess(env)
            agent.initialize()
            cold.append(time.perf_counter() - started)

            started = time.perf_counter()
            session_id = agent.result("session/new", {"cwd": str(work), "mcpServers": []})["sessionId"]
            new.append(time.perf_counter() - started)
            agent.until(lambda m: m.get("method") == "session/update")  # its commands, once the SDK is up

            agent.prompt(session_id, "warm up")  # first model call imports the provider SDK
            timings = []
            for _ in range(10):
                started = time.perf_counter()
                agent.prompt(session_id, "hi")
                timings.append(time.perf_counter() - started)
            round_trip.append(statistics.median(timings))

            model.add({"text": "z" * ANSWER_BYTES, "chunk_chars": 4096})
            started = time.perf_counter()
            _, seen = agent.prompt(session_id, "big")
            elapsed = time.perf_counter() - started
            assert len(answer_text(seen)) == ANSWER_BYTES
            throughput.append(ANSWER_BYTES / elapsed / 1e6)

            before = _rss_kb(agent.proc.pid)
            for _ in range(IDLE_SESSIONS):
                agent.new_session(work)
            per_session.append((_rss_kb(agent.proc.pid) - before) / IDLE_SESSIONS)
            agent.close()

    print(f"cold start to initialize answer: {statistics.median(cold) * 1000:.0f} ms")
    print(f"session/new answered:            {statistics.median(new) * 1000:.1f} ms (sent right after initialize)")
    print(f"one-line prompt round trip:      {statistics.median(round_trip) * 1000:.1f} ms")
    print(
        f"streaming throughput:            {statistics.median(throughput):.1f} MB/s of answer text"
        " (through the openai SDK and the fake HTTP server, 4 KiB chunks)"
    )
    print(
        f"  the ACP layer alone:           {_layer_throughput(work):.1f} MB/s"
        " (in-process scripted model, same chunks: what the SDK's parsing costs is the difference)"
    )
    print(f"memory per idle session:         {statistics.median(per_session):.0f} KB")
    print(f"(medians of {RUNS} runs on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
