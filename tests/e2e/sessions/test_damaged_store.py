"""Store files damaged by hand: the damaged session reports a clear error, every other one works."""

from __future__ import annotations

import json

from tests.e2e.sessions.flows import load


def _two_sessions(spawn, model, workspace) -> tuple[str, str]:
    first = spawn()
    good, bad = first.new_session(workspace), first.new_session(workspace)
    model.add({"text": "fine"})
    first.prompt(good, "hello")
    assert first.close() == 0
    return good, bad


def test_a_directory_in_place_of_a_log_fails_only_that_sessions_load(spawn, model, workspace, config_dir):
    good, bad = _two_sessions(spawn, model, workspace)
    log = config_dir / "sessions" / bad / "messages.jsonl"
    log.unlink()
    log.mkdir()
    agent = spawn()
    error = load(agent, bad, workspace)[0]["error"]
    assert (
        error["code"] == -32602 and bad in error["data"]["sessionId"] and "messages.jsonl" in error["data"]["sessionId"]
    )
    listed = {s["sessionId"] for s in agent.result("session/list", {"cwd": str(workspace)})["sessions"]}
    assert {good, bad} <= listed
    assert "result" in load(agent, good, workspace)[0]
    agent.new_session(workspace)


def test_a_meta_json_of_wrong_types_hides_only_that_session(spawn, model, workspace, config_dir):
    good, bad = _two_sessions(spawn, model, workspace)
    meta = config_dir / "sessions" / bad / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "cwd": 5}))
    (config_dir / "sessions" / "index.jsonl").unlink()  # rebuilt from every meta.json
    agent = spawn()
    listed = [s["sessionId"] for s in agent.result("session/list", {})["sessions"]]
    assert listed == [good]
    error = load(agent, bad, workspace)[0]["error"]
    assert error["code"] == -32602 and bad in error["data"]["sessionId"] and "cwd" in error["data"]["sessionId"]
    assert "result" in load(agent, good, workspace)[0]
    agent.new_session(workspace)
