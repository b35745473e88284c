"""Lone surrogates ("\\ud800", valid JSON escapes that no UTF-8 encoder accepts) from the client and the
model: made encodable where they enter, so no session, and above all no other session, breaks."""

from __future__ import annotations

from tests.e2e.acp.wire import Agents, answer_text, updates

LONE = "\ud800"


def _prompt_line(request_id: int, session_id: str, escaped_text: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"session/prompt","params":{{"sessionId":"{session_id}",'
        f'"prompt":[{{"type":"text","text":"{escaped_text}"}}]}}}}'
    )


def test_a_lone_surrogate_in_prompts_breaks_neither_the_session_nor_the_store(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent = agents.start()
    session_id = agent.new_session(workspace)
    model.add({"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"})
    for request_id, text in ((901, r"title \ud800 here"), (902, r"later \udfff prompt")):
        agent.send_line(_prompt_line(request_id, session_id, text))
        response, seen = agent.response(request_id)
        assert response["result"]["stopReason"] == "end_turn", response
    assert answer_text(seen) == "second answer"
    assert "\ufffd" in model.requests[-1]["messages"][-1]["content"]  # the model got valid text
    response, _ = agent.prompt(session_id, "and again")
    assert response["result"]["stopReason"] == "end_turn"
    other = agent.new_session(workspace)  # the store still works for everybody
    listed = agent.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert {s["sessionId"] for s in listed} == {session_id, other}
    assert next(s["title"] for s in listed if s["sessionId"] == session_id) == "title \ufffd here"
    assert agent.close() == 0

    restarted = agents.start()  # what was stored reads back
    listed = restarted.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert {s["sessionId"] for s in listed} == {session_id, other}
    loaded = restarted.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    assert "result" in loaded, loaded
    agents.close_all()


def test_lone_surrogates_from_the_model_do_not_stop_the_turn(agent, model, workspace):
    (workspace / "notes.txt").write_text("hello\n")
    session_id = agent.new_session(workspace)
    model.add(
        {
            "text": f"looking {LONE}",
            "tool_calls": [{"name": "read_file", "arguments": f'{{"path": "notes.txt", "x": "{LONE}"}}'}],
        },
        {"text": "done \udc80"},
        {"text": "next turn"},
    )
    response, seen = agent.prompt(session_id, "read it")
    assert response["result"]["stopReason"] == "end_turn"
    assert answer_text(seen) == "looking \ufffddone \ufffd"
    tool_call = updates(seen, "tool_call")[0]
    assert tool_call["rawInput"] == {"path": "notes.txt", "x": "\ufffd"}
    response, seen = agent.prompt(session_id, "again")
    assert response["result"]["stopReason"] == "end_turn" and answer_text(seen) == "next turn"
