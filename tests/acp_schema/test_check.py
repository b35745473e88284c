"""The schema check itself: what conforms passes, what does not fails with a message that says where and why."""

from __future__ import annotations

import copy

import pytest
from acp.connection import StreamDirection, StreamEvent
from tests.acp_schema import check

CHUNK = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {
        "sessionId": "s1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}},
    },
}
PERMISSION = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "session/request_permission",
    "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "call-1", "title": "Write main.tf"},
        "options": [{"optionId": "allow_once", "name": "Allow", "kind": "allow_once"}],
    },
}


@pytest.fixture(autouse=True)
def _nothing_left_behind():
    """The violations these tests provoke must not fail whatever runs next in this process."""
    yield
    check.take_found()


def with_change(message, path, value):
    changed = copy.deepcopy(message)
    *parents, last = path
    node = changed
    for key in parents:
        node = node[key]
    node[last] = value
    return changed


def test_official_shapes_pass():
    assert check.problems(CHUNK) == []
    assert check.problems(PERMISSION) == []
    assert check.problems({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}, "session/prompt") == []
    assert check.problems({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}) == []


def test_a_session_update_with_a_wrong_field_type_fails_naming_message_definition_and_path():
    (problem,) = check.problems(with_change(CHUNK, ["params", "update", "content", "text"], 5))
    assert problem == (
        "session/update notification violates schema.json#/$defs/SessionNotification"
        " at .params.update.content.text: 5 is not of type 'string'"
    )


def test_an_unknown_update_kind_lists_the_kinds_there_are():
    (problem,) = check.problems(with_change(CHUNK, ["params", "update", "sessionUpdate"], "agent_shout"))
    assert "at .params.update.sessionUpdate: 'agent_shout' is not one of [" in problem
    assert "'agent_message_chunk'" in problem


def test_a_value_outside_an_enumeration_lists_the_values_allowed():
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "done"}
    (problem,) = check.problems(with_change(CHUNK, ["params", "update"], update))
    assert problem.endswith(
        'at .params.update.status: "done" is none of: "pending", "in_progress", "completed", "failed", null'
    )


def test_a_response_is_checked_against_the_result_of_the_method_it_answers():
    prompt_answer = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "error"}}
    (problem,) = check.problems(prompt_answer, "session/prompt")
    assert problem.startswith(
        "response to session/prompt violates schema.json#/$defs/PromptResponse at .result.stopReason"
    )
    (problem,) = check.problems({"jsonrpc": "2.0", "id": 3, "result": {}}, "session/new")
    assert problem.endswith("at .result: 'sessionId' is a required property")


def test_an_error_response_is_checked_against_the_error_shape():
    (problem,) = check.problems({"jsonrpc": "2.0", "id": 4, "error": {"code": "-32602", "message": "bad"}})
    assert problem.startswith("error response violates schema.json#/$defs/Error at .error.code:")


def test_extensions_and_meta_pass_as_the_schema_allows():
    assert check.problems({"jsonrpc": "2.0", "method": "_iac/anything", "params": {"free": [1, "form"]}}) == []
    assert check.problems({"jsonrpc": "2.0", "id": 5, "result": 7}, "_iac/ask") == []
    assert check.problems({"jsonrpc": "2.0", "method": "_iac/ping"}) == [], "an extension may have no params"
    (problem,) = check.problems({"jsonrpc": "2.0", "method": "session/update"})
    assert problem.endswith("at .: 'params' is a required property")
    assert check.problems(with_change(CHUNK, ["params", "_meta"], {"iac-code/x": 1})) == []
    (problem,) = check.problems(with_change(CHUNK, ["params", "_meta"], "not an object"))
    assert "at .params._meta" in problem


def test_a_method_no_schema_has_is_a_violation():
    (problem,) = check.problems({"jsonrpc": "2.0", "method": "session/shout", "params": {}})
    assert "'session/shout' is not among the agent's notifications" in problem


def test_the_seeds_aliases_are_answered_as_the_method_they_stand_for():
    assert check.problems({"jsonrpc": "2.0", "id": 1, "result": {"sessions": []}}, "sessions/list") == []
    (problem,) = check.problems({"jsonrpc": "2.0", "id": 1, "result": {}}, "sessions/list")
    assert "schema.json#/$defs/ListSessionsResponse" in problem


def test_a_method_only_the_unstable_schema_has_is_checked_against_it():
    (problem,) = check.problems({"jsonrpc": "2.0", "id": 1, "result": {}}, "session/fork")
    assert "schema.unstable.json#/$defs/ForkSessionResponse" in problem


def test_a_connection_answers_each_id_with_the_method_it_was_sent_for():
    conformance = check.Conformance("test connection")
    conformance.sent('{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {}}')
    violation = conformance.received({"jsonrpc": "2.0", "id": 7, "result": {"sessionId": "s"}})
    assert violation is not None
    assert str(violation).startswith("test connection: response to session/prompt violates")
    assert '"sessionId": "s"' in str(violation), "the message itself is shown"
    assert check.take_found() == [violation]


def test_violations_found_in_a_reader_thread_are_raised_in_the_test():
    conformance = check.Conformance("reader")
    assert conformance.received(CHUNK) is None
    check.raise_found()  # nothing found: nothing raised
    conformance.received(with_change(CHUNK, ["params", "sessionId"], 1))
    with pytest.raises(check.SchemaViolation, match=r"reader: session/update notification .* at \.params\.sessionId"):
        check.raise_found()
    with pytest.raises(check.SchemaViolation, match="1 agent message"):
        check.fail_if_found()
    check.fail_if_found()  # taken: the next test starts clean


def test_an_sdk_connection_observer_sees_both_directions():
    conformance = check.Conformance("sdk")
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}
    conformance.observe(StreamEvent(StreamDirection.OUTGOING, request))
    conformance.observe(StreamEvent(StreamDirection.INCOMING, {"jsonrpc": "2.0", "id": 1, "result": {}}))
    (violation,) = check.take_found()
    assert "response to session/new" in str(violation)


def test_a_transcript_read_after_the_fact_is_checked_at_once():
    check.check_transcript(
        "saved", [CHUNK, {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}], {3: "session/prompt"}
    )
    with pytest.raises(check.SchemaViolation, match=r"saved: response to session/new .* 'sessionId' is a required"):
        check.check_transcript("saved", [{"jsonrpc": "2.0", "id": 2, "result": {}}], {2: "session/new"})


def test_integer_formats_are_ranges_as_the_typescript_sdk_checks_them():
    usage = {"sessionUpdate": "usage_update", "used": 10, "size": 1000}
    assert check.problems(with_change(CHUNK, ["params", "update"], usage)) == []
    (problem,) = check.problems(with_change(CHUNK, ["params", "update"], {**usage, "used": -1}))
    assert problem.endswith("at .params.update.used: -1 is not a 'uint64'")
    (problem,) = check.problems(
        with_change(PERMISSION, ["params", "toolCall", "locations"], [{"path": "/w/a", "line": -3}])
    )
    assert "at .params.toolCall.locations[0].line: -3 is not a 'uint32'" in problem
