"""`iac-code acp` handed to the warm process: a whole session through it, with the launcher's environment
and directory; concurrent launches; signals, exit statuses, and deaths on either side."""

from __future__ import annotations

import os
import signal

from tests.e2e.acp.wire import answer_text, model_env, select, updates
from tests.e2e.warm.runtime import child_pid, served_by, wait_until_gone
from tests.fakes.openai_server import ScriptedOpenAI

WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "terraform {}\n"}}]}


def test_a_session_served_end_to_end_then_loaded_by_the_next_launch(runtime, model, tmp_path, workspace):
    env = model_env(model.url, tmp_path / "config")
    runtime.start(env)
    launched_in = tmp_path / "editor"
    launched_in.mkdir()
    agent = runtime.launch(env, "--log-file", "agent.log", cwd=launched_in)
    agent.initialize()
    session_id = agent.new_session(workspace)
    model.add(WRITE, {"text": "written"})
    response, seen = agent.prompt(session_id, "write it", select("allow_once"))
    assert response["result"]["stopReason"] == "end_turn"
    assert [m["method"] for m in seen if m.get("method") == "session/request_permission"] == [
        "session/request_permission"
    ]
    assert (workspace / "main.tf").read_text() == "terraform {}\n"
    assert agent.close() == 0
    assert served_by(agent) is not None
    assert not agent.stdout_problems
    assert "agent.log" in os.listdir(launched_in)  # a relative --log-file: the launcher's directory

    again = runtime.launch(env)
    again.initialize()
    _, replayed = again.response(
        again.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    )
    assert answer_text(replayed) == "written"
    assert [u["status"] for u in updates(replayed, "tool_call_update")][-1] == "completed"
    assert again.close() == 0
    assert served_by(again) not in (None, served_by(agent))
    assert not again.stdout_problems


def test_concurrent_launches_each_get_their_own_child_and_environment(runtime, tmp_path, workspace):
    with ScriptedOpenAI(default={"text": "one"}) as first, ScriptedOpenAI(default={"text": "two"}) as second:
        config = tmp_path / "config"
        runtime.start(model_env(first.url, config, IAC_CODE_MODEL="the-first-launchs-model"))
        agents = [runtime.launch(model_env(m.url, config)) for m in (first, second)]
        for agent in agents:
            agent.initialize()
        sessions = [agent.new_session(workspace) for agent in agents]
        answers = [answer_text(agent.prompt(s, "hi")[1]) for agent, s in zip(agents, sessions, strict=True)]
        assert answers == ["one", "two"]  # each child uses its own launcher's IAC_CODE_BASE_URL
        # nothing of the launch that started the warm process reaches a child
        assert {r["model"] for r in [*first.requests, *second.requests]} == {"scripted-model"}
        assert [agent.close() for agent in agents] == [0, 0]
        pids = [served_by(agent) for agent in agents]
        assert None not in pids and pids[0] != pids[1]


def test_a_launcher_killed_with_sigkill_leaves_no_child(runtime, model, tmp_path):
    env = model_env(model.url, tmp_path / "config")
    runtime.start(env)
    agent = runtime.launch(env)
    agent.initialize()
    child = child_pid(agent)
    agent.proc.kill()  # the editor's stdin pipe stays open: only the connection tells the child
    agent.proc.wait()
    assert wait_until_gone(child)


def test_the_exit_status_and_signals_are_forwarded(runtime, model, tmp_path):
    env = model_env(model.url, tmp_path / "config")
    runtime.start(env)
    misconfigured = runtime.launch({**env, "IAC_CODE_MAX_TURNS": "many"})
    assert misconfigured.proc.wait(30) == 2
    misconfigured.close()
    assert served_by(misconfigured) is not None
    assert any("IAC_CODE_MAX_TURNS must be a number" in line for line in misconfigured.stderr_lines)

    agent = runtime.launch(env)
    agent.initialize()
    child = child_pid(agent)
    agent.proc.send_signal(signal.SIGTERM)  # stops the child cleanly, as it stops an in-process server
    assert agent.proc.wait(30) == 0
    assert wait_until_gone(child)


def test_a_session_survives_its_child_killed_with_sigkill(runtime, model, tmp_path, workspace):
    env = model_env(model.url, tmp_path / "config")
    runtime.start(env)
    agent = runtime.launch(env)
    agent.initialize()
    session_id = agent.new_session(workspace)
    model.add({"text": "kept"})
    agent.prompt(session_id, "remember this")
    os.kill(child_pid(agent), signal.SIGKILL)
    assert agent.proc.wait(30) == 1
    agent.close()
    assert any("ended without an exit status" in line for line in agent.stderr_lines)

    again = runtime.launch(env)
    again.initialize()
    _, replayed = again.response(
        again.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    )
    assert answer_text(replayed) == "kept"
    assert again.close() == 0
