"""v1.21's `notice`, `compaction_update` and `compaction_summary_chunk`, only to a client that asked for them."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.acp.wire import AgentProcess, answer_text, updates

REPORTS = {"session": {"notices": {}, "compaction": {}}}


def _initialize(agent: AgentProcess, capabilities: dict) -> None:
    agent.result("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})


def _broken_skill(workspace: Path) -> Path:
    skill = workspace / ".agents" / "skills" / "broken" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: broken\n---\nno description\n")
    return skill


def _commands_and_what_follows(agent: AgentProcess, workspace: Path) -> list[dict]:
    """session/new, then its updates up to the first that is neither its command list nor a config update."""
    agent.result("session/new", {"cwd": str(workspace), "mcpServers": []})
    told, seen = agent.until(lambda m: bool(updates([m])) and updates([m], "available_commands_update") == [])
    return [*seen, told]


def test_a_skipped_skill_is_a_notice_for_a_client_that_shows_notices(spawn, workspace):
    skill = _broken_skill(workspace)
    agent = spawn()
    _initialize(agent, REPORTS)
    (notice,) = updates(_commands_and_what_follows(agent, workspace), "notice")
    assert notice == {
        "sessionUpdate": "notice",
        "severity": "warning",
        "title": "skills",
        "description": f"skipped {skill}: `description` is missing or empty",
    }


def test_without_the_capability_the_skipped_skill_is_an_agent_message(spawn, workspace):
    skill = _broken_skill(workspace)
    agent = spawn()
    _initialize(agent, {"session": {"compaction": {}}})  # compaction alone: no notices
    seen = _commands_and_what_follows(agent, workspace)
    assert updates(seen, "notice") == []
    assert answer_text(seen).strip() == f"[skills] skipped {skill}: `description` is missing or empty"


def _two_turns_then_compact(agent: AgentProcess, model, workspace: Path) -> tuple[str, list[dict]]:
    model.add({"text": "one"}, {"text": "two"}, {"text": "SUMMARY of the talk", "chunk_chars": 4})
    session_id = agent.new_session(workspace)
    agent.prompt(session_id, "hello")
    agent.prompt(session_id, "more")
    response, seen = agent.prompt(session_id, "/compact")
    assert response["result"]["stopReason"] == "end_turn"
    return session_id, seen


def test_a_compaction_is_reported_as_it_goes_and_replayed_on_load(spawn, model, workspace):
    agent = spawn()
    _initialize(agent, REPORTS)
    session_id, seen = _two_turns_then_compact(agent, model, workspace)
    reported = [u for u in updates(seen) if u["sessionUpdate"].startswith("compaction")]
    started, *chunks, completed = reported
    compaction_id = started["compactionId"]
    assert started == {"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": "in_progress"}
    assert len(chunks) == 5 and {c["sessionUpdate"] for c in chunks} == {"compaction_summary_chunk"}
    assert {c["compactionId"] for c in chunks} == {compaction_id}
    assert "".join(c["content"]["text"] for c in chunks) == "SUMMARY of the talk"
    summary = [{"type": "text", "text": "SUMMARY of the talk"}]
    assert completed == {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": "completed",
        "summary": summary,
    }
    assert "[context compacted]" not in answer_text(seen)

    again = spawn()  # another process: the summary comes from the store
    _initialize(again, REPORTS)
    request = again.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    _, replayed = again.response(request)
    (replayed_compaction,) = updates(replayed, "compaction_update")
    assert replayed_compaction == completed  # under the id it had live
    assert updates(replayed, "compaction_summary_chunk") == []
    assert "[context compacted]" not in answer_text(replayed)


def test_a_failed_compaction_ends_failed_under_the_same_id(spawn, model, workspace):
    agent = spawn()
    _initialize(agent, REPORTS)
    model.add({"text": "one"}, {"text": "two"}, {"status": 400, "text": "context too long"})
    session_id = agent.new_session(workspace)
    agent.prompt(session_id, "hello")
    agent.prompt(session_id, "more")
    _, seen = agent.prompt(session_id, "/compact")
    started, failed = updates(seen, "compaction_update")
    assert started["status"] == "in_progress"
    assert failed["compactionId"] == started["compactionId"] and failed["status"] == "failed"
    assert "context too long" in failed["error"]


def test_without_the_capability_a_compaction_is_a_message_as_before(spawn, model, workspace):
    agent = spawn()
    _initialize(agent, {"session": {"notices": {}}})
    session_id, seen = _two_turns_then_compact(agent, model, workspace)
    assert [u for u in updates(seen) if u["sessionUpdate"].startswith("compaction")] == []
    assert answer_text(seen).startswith("\n[context compacted] Context compacted: about ")
    request = agent.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    _, replayed = agent.response(request)
    assert updates(replayed, "compaction_update") == []
    assert "[context compacted]" in answer_text(replayed)
