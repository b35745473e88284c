"""Headless runs get what issue 10 added to the loop: the user's own AGENTS.md, a sub-agent's steps as
`tool_progress` events in stream-json, and update_plan."""

from __future__ import annotations

import json

from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI


def test_stream_json_shows_a_sub_agents_steps_and_the_users_instructions_are_read(tmp_path):
    workspace, config = tmp_path / "work", tmp_path / "config"
    workspace.mkdir()
    config.mkdir()
    (config / "AGENTS.md").write_text("Prefer OpenTofu over Terraform.\n")
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    plan = [{"content": "Find the VPCs", "status": "in_progress"}]
    script = [
        {"tool_calls": [{"name": "update_plan", "arguments": {"entries": plan}}]},
        {"tool_calls": [{"name": "agent", "arguments": {"description": "Find VPCs", "prompt": "List the VPCs"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]},  # the sub-agent
        {"text": "aws_vpc.main"},  # its answer
        {"text": "One VPC."},
    ]
    with ScriptedOpenAI(script) as model:
        result = run(workspace, model, "-p", "find the VPCs", "--yes", "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    progress = [e for e in events if e["type"] == "tool_progress"]
    assert progress and progress[-1]["steps"] == [{"title": "Read main.tf", "state": "completed"}]
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert results[progress[-1]["id"]]["output"] == "aws_vpc.main"
    assert "Plan updated: 0 of 1 steps completed. In progress: Find the VPCs" in [r["output"] for r in results.values()]
    assert "Prefer OpenTofu over Terraform." in model.requests[0]["messages"][0]["content"]
