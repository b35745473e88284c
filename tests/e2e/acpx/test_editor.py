"""acpx as the editor (issue 10): it advertises fs and terminal, so the agent reads and writes through
`fs/*` and runs bash in `terminal/*`; plan updates and a custom command, all in one `acpx exec` each."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import updates
from tests.e2e.acpx.client import only_request, requests, response_to

from iac_code.system.processes import contained_in_terminal

pytestmark = pytest.mark.timeout(600)


def _tool_results(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_files_and_commands_go_through_acpx_and_the_plan_is_shown(acpx, model):
    (acpx.workspace / "vpc.tf").write_text('resource "alicloud_vpc" "main" {}\n')
    plan = [{"content": "Read vpc.tf", "status": "completed"}, {"content": "Write outputs.tf", "status": "in_progress"}]
    model.add(
        {"tool_calls": [{"name": "update_plan", "arguments": {"entries": plan}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "vpc.tf"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "outputs.tf", "content": "# outputs\n"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo checked; exit 3"}}]},
        {"text": "Done."},
    )

    run = acpx.run("--approve-all", "exec", "Add outputs")

    assert run.returncode == 0, run.describe()
    messages = run.messages
    read, before_write = requests(messages, "fs/read_text_file")  # the second: what outputs.tf held, for the diff
    assert read["params"]["path"] == str(acpx.workspace / "vpc.tf")
    assert before_write["params"]["path"] == str(acpx.workspace / "outputs.tf")
    assert 'alicloud_vpc" "main"' in response_to(messages, read)["result"]["content"]
    assert only_request(messages, "fs/write_text_file")["params"]["content"] == "# outputs\n"
    assert (acpx.workspace / "outputs.tf").read_text() == "# outputs\n", "acpx wrote it"
    create = only_request(messages, "terminal/create")
    assert create["params"]["args"] == contained_in_terminal("echo checked; exit 3")
    terminal_id = response_to(messages, create)["result"]["terminalId"]
    for method in ("terminal/wait_for_exit", "terminal/release"):
        assert [r["params"]["terminalId"] for r in requests(messages, method)] == [terminal_id]
    shown = [
        u
        for u in updates(messages, "tool_call_update")
        if {"type": "terminal", "terminalId": terminal_id} in (u.get("content") or [])
    ]
    assert [u.get("status") for u in shown] == [None, "failed"], "live while it ran, then its final state"
    (shown_plan,) = updates(messages, "plan")
    assert [(e["content"], e["status"]) for e in shown_plan["entries"]] == [
        ("Read vpc.tf", "completed"),
        ("Write outputs.tf", "in_progress"),
    ]
    assert _tool_results(model.requests[-1])[-1] == "checked\nExit code: 3"


def test_a_custom_command_runs_as_a_prompt(acpx, model):
    commands = acpx.workspace / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS for open security groups.\n")
    model.add({"text": "No open security groups."})

    run = acpx.run("exec", "/review modules/vpc")

    assert run.returncode == 0, run.describe()
    (listed,) = updates(run.messages, "available_commands_update")
    assert "review" in [c["name"] for c in listed["availableCommands"]]
    assert model.requests[0]["messages"][-1] == {
        "role": "user",
        "content": "Review modules/vpc for open security groups.",
    }
