"""The database damaged by hand: the damaged session reports a clear error, every other one works; a
file that is no database is reported on every method that needs the store, and the server keeps serving."""

from __future__ import annotations

from tests.e2e.sessions.flows import edit_database, load


def _two_sessions(spawn, model, workspace) -> tuple[str, str]:
    first = spawn()
    good, bad = first.new_session(workspace), first.new_session(workspace)
    model.add({"text": "fine"})
    first.prompt(good, "hello")
    assert first.close() == 0
    return good, bad


def test_a_record_that_is_not_json_fails_only_that_sessions_load(spawn, model, workspace, config_dir):
    good, bad = _two_sessions(spawn, model, workspace)
    edit_database(config_dir, "UPDATE iac_sessions SET title = 'not JSON' WHERE session_id = ?", bad)
    agent = spawn()
    error = load(agent, bad, workspace)[0]["error"]
    assert error["code"] == -32602 and bad in error["data"]["sessionId"] and "title" in error["data"]["sessionId"]
    listed = {s["sessionId"] for s in agent.result("session/list", {"cwd": str(workspace)})["sessions"]}
    assert listed == {good}
    assert "result" in load(agent, good, workspace)[0]
    agent.new_session(workspace)


def test_a_record_of_wrong_types_hides_only_that_session(spawn, model, workspace, config_dir):
    good, bad = _two_sessions(spawn, model, workspace)
    edit_database(config_dir, "UPDATE iac_sessions SET cwd = '5' WHERE session_id = ?", bad)
    agent = spawn()
    listed = [s["sessionId"] for s in agent.result("session/list", {})["sessions"]]
    assert listed == [good]
    error = load(agent, bad, workspace)[0]["error"]
    assert error["code"] == -32602 and bad in error["data"]["sessionId"] and "cwd" in error["data"]["sessionId"]
    assert "result" in load(agent, good, workspace)[0]
    agent.new_session(workspace)


def test_a_file_that_is_no_database_is_reported_and_the_server_keeps_serving(spawn, workspace, config_dir):
    config_dir.mkdir()
    (config_dir / "iac-code.db").write_bytes(b"this is not an SQLite database, whatever its name says\n" * 100)
    agent = spawn()
    error = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})["error"]
    assert error["code"] == -32603 and str(config_dir / "iac-code.db") in error["message"]
    assert agent.call("session/list", {})["error"]["code"] == -32603
    assert agent.result("initialize", {"protocolVersion": 1})["protocolVersion"] == 1
