"""kill -9 of the agent while a bash command runs: nothing the command started survives it."""

from __future__ import annotations

import uuid

from tests.e2e.acp.wire import Agents, select
from tests.processes import MARK, marked_processes, within

# A background job, one that left the session with setsid, and the shell that waits on a foreground child,
# all marked (tests/processes.py: their pids inside the command's PID namespace say nothing out here).
COMMAND = (
    "export {mark}; sleep 300 & setsid sleep 300 >/dev/null 2>&1 & exec env {mark} bash -c 'sleep 300; echo never'"
)


def test_killing_the_agent_ends_what_its_commands_started(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent = agents.start()
    session_id = agent.new_session(workspace)
    marker = uuid.uuid4().hex
    command = COMMAND.format(mark=f"{MARK}={marker}")
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]})
    agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]})
    request, _ = agent.until(lambda m: m.get("method") == "session/request_permission")
    agent.answer(request, select("allow_once")(request))
    assert within(10, lambda: len(marked_processes(marker)) == 4)  # 3 sleeps and the shell

    agent.proc.kill()
    agent.proc.wait(10)

    assert within(3, lambda: marked_processes(marker) == [])
    agents.close_all(killed_ok=True)
