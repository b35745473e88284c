"""kill -9 of the agent while a bash command runs: nothing the command started survives it."""

from __future__ import annotations

from tests.e2e.acp.wire import Agents, select
from tests.processes import gone_within, wait_for_text

# A foreground child, a background job and one that left the session with setsid; then the shell waits.
COMMAND = (
    "sleep 300 & echo $! > job.pid; "
    "setsid sleep 300 >/dev/null 2>&1 & echo $! > escaped.pid; "
    "echo $$ > shell.pid; sleep 300; echo never"
)


def test_killing_the_agent_ends_what_its_commands_started(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent = agents.start()
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]})
    agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    request, _ = agent.until(lambda m: m.get("method") == "session/request_permission")
    agent.answer(request, select("allow_once")(request))
    pids = [int(wait_for_text(workspace / name)) for name in ("job.pid", "escaped.pid", "shell.pid")]

    agent.proc.kill()
    agent.proc.wait(10)

    survivors = [pid for pid in pids if not gone_within(pid, 3)]
    assert survivors == []
    agents.close_all(killed_ok=True)
