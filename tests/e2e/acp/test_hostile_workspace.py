"""A workspace that holds a FIFO: the tools refuse it at once, nothing hangs, and the process still exits."""

from __future__ import annotations

import os
import signal
import time

import pytest
from tests.e2e.acp.wire import updates


@pytest.mark.parametrize("ending", ["SIGTERM", "stdin EOF"])
def test_six_reads_of_a_fifo_freeze_nothing_and_the_process_still_exits(spawn, model, workspace, tmp_path, ending):
    os.mkfifo(workspace / "fifo")
    (workspace / "main.tf").write_text("ok\n")
    reads = [{"id": f"call_{n}", "name": "read_file", "arguments": {"path": "fifo"}} for n in range(6)]
    model.add({"tool_calls": reads}, {"text": "the fifo is not a file"}, {"text": "still alive"})
    agent = spawn()
    stuck = agent.new_session(workspace)
    response, seen = agent.prompt(stuck, "read the fifo six times")
    assert response["result"]["stopReason"] == "end_turn"
    results = [u for u in updates(seen, "tool_call_update") if u.get("status") == "failed"]
    assert len(results) == 6 and all("not a regular file" in str(u["content"]) for u in results)

    other_workspace = tmp_path / "other"
    other_workspace.mkdir()
    other = agent.new_session(other_workspace)  # builds nothing on a blocked pool: it answers
    response, _ = agent.prompt(other, "are you there?")
    assert response["result"]["stopReason"] == "end_turn"

    started = time.monotonic()
    if ending == "SIGTERM":
        agent.proc.send_signal(signal.SIGTERM)
    else:
        agent.proc.stdin.close()
    assert agent.proc.wait(10) == 0
    assert time.monotonic() - started < 5
