"""One-shot `acpx exec` against `iac-code acp`: handshake, streamed answer, permissions, read-only tools.

acpx's `--format json` prints every ACP message it exchanged with the agent, in both directions."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import answer_text, updates
from tests.e2e.acpx.client import only_request, requests, response_to

# The first test of a fresh checkout also installs acpx and Node 22 from npm.
pytestmark = pytest.mark.timeout(600)

EXIT_PERMISSION_DENIED = 5  # acpx's exit code when every permission request of the turn was denied
PINNED = 'terraform {\n  required_version = ">= 1.5"\n}\n'
WRITE = {"name": "write_file", "arguments": {"path": "main.tf", "content": PINNED}}


def _tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_exec_prints_the_streamed_answer(acpx, model):
    answer = "Your VPC needs a NAT gateway for private subnets to reach the internet."
    # a pause between chunks, so the agent cannot merge them into one update
    model.add({"text": answer, "chunk_chars": 24, "delay": 0.05})

    run = acpx.run("exec", "Why can't my private subnet reach the internet?")

    assert run.returncode == 0, run.describe()
    messages = run.messages
    initialize = only_request(messages, "initialize")
    assert initialize["params"]["clientInfo"]["name"] == "acpx"
    handshake = response_to(messages, initialize)["result"]
    assert handshake["protocolVersion"] == 1
    assert handshake["agentInfo"]["name"] == "iac-code"
    session_id = response_to(messages, only_request(messages, "session/new"))["result"]["sessionId"]
    prompt = only_request(messages, "session/prompt")
    assert prompt["params"]["sessionId"] == session_id
    assert response_to(messages, prompt)["result"]["stopReason"] == "end_turn"
    chunks = updates(messages, "agent_message_chunk")
    assert len(chunks) > 1  # streamed, not sent whole
    assert answer_text(messages) == answer
    assert {m["params"]["sessionId"] for m in messages if m.get("method") == "session/update"} == {session_id}
    (request,) = model.requests
    assert request["messages"][-1] == {"role": "user", "content": "Why can't my private subnet reach the internet?"}


def test_approve_all_lets_write_file_create_the_file(acpx, model):
    model.add({"tool_calls": [WRITE]}, {"text": "Created main.tf."})

    run = acpx.run("--approve-all", "exec", "Pin the Terraform version")

    assert run.returncode == 0, run.describe()
    assert (acpx.workspace / "main.tf").read_text() == PINNED
    messages = run.messages
    permission = only_request(messages, "session/request_permission")
    tool_call_id = permission["params"]["toolCall"]["toolCallId"]
    answer = response_to(messages, permission)["result"]["outcome"]
    assert answer == {"outcome": "selected", "optionId": "allow_once"}
    finished = [u for u in updates(messages, "tool_call_update") if u["toolCallId"] == tool_call_id]
    assert finished[-1]["status"] == "completed"
    assert _tool_results(model) == ["Created main.tf (3 lines)."]
    assert answer_text(messages) == "Created main.tf."


def test_deny_all_keeps_the_file_absent_and_tells_the_model(acpx, model):
    model.add({"tool_calls": [WRITE]}, {"text": "Understood, nothing written."})

    run = acpx.run("--deny-all", "exec", "Pin the Terraform version")

    assert run.returncode == EXIT_PERMISSION_DENIED, run.describe()
    assert not (acpx.workspace / "main.tf").exists()
    messages = run.messages
    permission = only_request(messages, "session/request_permission")
    chosen = response_to(messages, permission)["result"]["outcome"]["optionId"]
    kinds = {option["optionId"]: option["kind"] for option in permission["params"]["options"]}
    assert kinds[chosen].startswith("reject")
    assert [u["status"] for u in updates(messages, "tool_call_update")] == ["failed"]
    assert _tool_results(model) == ["Permission denied."]
    prompt = only_request(messages, "session/prompt")
    assert response_to(messages, prompt)["result"]["stopReason"] == "end_turn"


def test_read_file_runs_without_a_permission_request(acpx, model):
    (acpx.workspace / "vpc.tf").write_text('resource "alicloud_vpc" "main" {\n  cidr_block = "10.0.0.0/8"\n}\n')
    model.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "vpc.tf"}}]}, {"text": "A /8 VPC."})

    # --deny-all would refuse any request: the read succeeding proves none was made. --no-fs: acpx's own
    # file system refuses reads under --deny-all, so the agent reads the disk (test_editor.py covers fs).
    run = acpx.run("--deny-all", "--no-fs", "exec", "What does vpc.tf create?")

    assert run.returncode == 0, run.describe()
    messages = run.messages
    assert requests(messages, "session/request_permission") == []
    (start,) = updates(messages, "tool_call")
    assert start["kind"] == "read"
    assert [u["status"] for u in updates(messages, "tool_call_update")] == ["in_progress", "completed"]
    (result,) = _tool_results(model)
    assert 'cidr_block = "10.0.0.0/8"' in result
    assert answer_text(messages) == "A /8 VPC."
