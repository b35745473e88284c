"""`iac-code acp` on stdio with a database: sessions live in PostgreSQL, and two processes with nothing else
in common (separate config directories) share them, one holder at a time."""

from __future__ import annotations

from tests.e2e.acp.wire import Agents, answer_text
from tests.e2e.cluster.conftest import HEARTBEAT_SECONDS, LEASE_SECONDS


def test_two_stdio_processes_share_sessions_through_the_database(model, pg_url, tmp_path):
    env = {
        "IAC_CODE_DATABASE_URL": pg_url,
        "IAC_CODE_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
        "IAC_CODE_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    first_agents, second_agents = Agents(model.url, tmp_path / "one"), Agents(model.url, tmp_path / "two")
    first, second = first_agents.start(**env), second_agents.start(**env)
    try:
        session_id = first.new_session(tmp_path)
        model.add({"text": "written by the first"})
        response, _ = first.prompt(session_id, "hello")
        assert response["result"]["stopReason"] == "end_turn"

        listed = second.result("session/list", {"cwd": str(tmp_path)})["sessions"]
        assert [s["sessionId"] for s in listed] == [session_id] and listed[0]["title"] == "hello"
        # The first holds it, idle: asked through the database, it lets go, and the second loads it.
        load = {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
        loaded, replay = second.response(second.start_request("session/load", load))
        assert "result" in loaded and answer_text(replay) == "written by the first"
        model.add({"text": "and by the second"})
        response, updates = second.prompt(session_id, "again")
        assert answer_text(updates) == "and by the second"

        taken = first.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]})
        assert taken["error"]["data"] == {"sessionId": "Session not found"}  # no longer held here
    finally:
        first_agents.close_all()
        second_agents.close_all()
