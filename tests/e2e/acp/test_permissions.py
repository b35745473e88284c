"""Permission requests: the four options, both answer forms, memory, modes, one toolCallId."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import select, updates

WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "terraform {}\n"}}]}


def _tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_allow_once_runs_the_tool_with_one_tool_call_id(agent, model, workspace):
    model.add(WRITE, {"text": "done"})
    session_id = agent.new_session(workspace)
    requests: list[dict] = []

    def allow(request):
        requests.append(request)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    response, seen = agent.prompt(session_id, "write it", allow)
    assert response["result"]["stopReason"] == "end_turn"
    assert (workspace / "main.tf").read_text() == "terraform {}\n"
    (request,) = requests
    params = request["params"]
    assert params["sessionId"] == session_id
    assert [(o["optionId"], o["kind"]) for o in params["options"]] == [
        ("allow_once", "allow_once"),
        ("allow_always", "allow_always"),
        ("reject_once", "reject_once"),
        ("reject_always", "reject_always"),
    ]
    call_id = params["toolCall"]["toolCallId"]
    start, *progress = [u for u in updates(seen) if u["sessionUpdate"].startswith("tool_call")]
    assert start["sessionUpdate"] == "tool_call" and start["toolCallId"] == call_id
    assert (start["kind"], start["status"], start["title"]) == ("edit", "pending", "Write main.tf")
    assert start["rawInput"] == {"path": "main.tf", "content": "terraform {}\n"}
    assert start["locations"] == [{"path": str(workspace / "main.tf")}]
    assert [(u["toolCallId"], u["status"]) for u in progress] == [(call_id, "in_progress"), (call_id, "completed")]
    diff = progress[-1]["content"][0]
    assert diff["type"] == "diff" and diff["path"] == str(workspace / "main.tf") and diff["newText"] == "terraform {}\n"
    # the tool_call reached the client before the question about it
    assert seen.index(request) > next(
        i for i, m in enumerate(seen) if m.get("params", {}).get("update", {}).get("sessionUpdate") == "tool_call"
    )


@pytest.mark.parametrize(
    "answer",
    [
        {"outcome": {"outcome": "selected", "optionId": "reject_once"}},
        {"outcome": "denied"},
        {"outcome": {"outcome": "selected", "optionId": "no-such-option"}},
    ],
    ids=["reject_once", "flat-denied", "unknown-option"],
)
def test_denials_never_run_the_tool(agent, model, workspace, answer):
    model.add(WRITE, {"text": "ok"})
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "write it", lambda request: answer)
    assert response["result"]["stopReason"] == "end_turn"
    assert not (workspace / "main.tf").exists()
    finished = updates(seen, "tool_call_update")
    assert [u["status"] for u in finished] == ["failed"]
    assert _tool_results(model) == ["Permission denied."]


def test_flat_allowed_answer_is_accepted(agent, model, workspace):
    model.add(WRITE, {"text": "ok"})
    session_id = agent.new_session(workspace)
    agent.prompt(session_id, "write it", lambda request: {"outcome": "allowed", "option_id": "allow_once"})
    assert (workspace / "main.tf").exists()


def test_always_answers_hold_for_the_tool_in_that_session_only(agent, model, workspace):
    session_id = agent.new_session(workspace)
    other = agent.new_session(workspace)
    asked: list[str] = []

    def record(option_id):
        def answer(request):
            asked.append(request["params"]["sessionId"])
            return {"outcome": {"outcome": "selected", "optionId": option_id}}

        return answer

    model.add(WRITE, {"text": "1"}, WRITE, {"text": "2"})
    agent.prompt(session_id, "write", record("allow_always"))
    agent.prompt(session_id, "write again", record("reject_once"))
    assert asked == [session_id]  # the second write did not ask

    bash = {"tool_calls": [{"name": "bash", "arguments": {"command": "touch ran"}}]}
    model.add(bash, {"text": "3"}, bash, {"text": "4"})
    agent.prompt(session_id, "run", record("reject_always"))
    agent.prompt(session_id, "run again", record("allow_once"))
    assert asked == [session_id, session_id]
    assert not (workspace / "ran").exists()
    assert _tool_results(model)[-1] == "Permission denied."

    model.add(WRITE, {"text": "5"})
    agent.prompt(other, "write", record("reject_once"))
    assert asked == [session_id, session_id, other]  # the other session has its own memory


def test_modes_decide_without_asking(agent, model, workspace):
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "read-only"})
    model.add(WRITE, {"text": "no"})
    _response, seen = agent.prompt(session_id, "write")  # any permission request fails this call
    assert not (workspace / "main.tf").exists()
    assert [u["status"] for u in updates(seen, "tool_call_update")] == ["failed"]

    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "accept-edits"})
    model.add(WRITE, {"text": "yes"})
    agent.prompt(session_id, "write")
    assert (workspace / "main.tf").exists()
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"text": "asked"})
    asked = []
    agent.prompt(
        session_id,
        "run",
        lambda request: asked.append(request) or {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    )
    assert len(asked) == 1  # execute still asks in accept-edits
    assert select("allow_once")(None)["outcome"]["optionId"] == "allow_once"
