"""Slash commands in `iac-code -p`, through the real process: the same session core as an editor's, so the
same commands (/help, /check, the Markdown commands, MCP prompts), and a command that cannot run fails."""

from __future__ import annotations

import json

import pytest
from tests.e2e.mcp.servers import fixture_server, marker, processes_with
from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI

pytestmark = pytest.mark.timeout(120)


def test_help_lists_the_commands_and_modes_without_a_model_call(workspace):
    commands = workspace / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a module\n---\nReview $ARGUMENTS\n")
    with ScriptedOpenAI([]) as model:
        result = run(workspace, model, "-p", "/help")
    assert result.returncode == 0, result.stderr
    assert model.requests == []
    lines = result.stdout.splitlines()
    assert lines[0] == "Commands:" and "  /check: " in result.stdout and "  /review: Review a module" in lines
    assert "  read-only: Never write files or run commands" in lines


def test_check_runs_iac_check_on_the_workspace_without_a_model_call(workspace):
    (workspace / "main.tf").write_text('resource "null_resource" "x" {}\n')
    with ScriptedOpenAI([]) as model:
        result = run(workspace, model, "-p", "/check", "--output-format", "stream-json")
    assert result.returncode == 0, result.stderr
    assert model.requests == []
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert next(e["type"] for e in events if e["type"] != "usage") == "tool_use"
    (finished,) = [e for e in events if e["type"] == "tool_result"]
    assert finished["isError"] is False and finished["output"]
    assert events[-1]["type"] == "result" and events[-1]["stopReason"] == "end_turn"


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_check_answers_with_its_findings_in_text_and_json(workspace, output_format):
    (workspace / "broken.tf").write_text('resource "null_resource" "x" {\n')  # unclosed block
    with ScriptedOpenAI([]) as model:
        result = run(workspace, model, "-p", "/check", "--output-format", output_format)
    answer = result.stdout if output_format == "text" else json.loads(result.stdout)["result"]
    assert "broken.tf" in answer, (result.stdout, result.stderr)
    assert model.requests == []


def test_a_markdown_command_becomes_the_prompt(workspace):
    commands = workspace / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS for security.\n")
    with ScriptedOpenAI([{"text": "looks fine"}]) as model:
        result = run(workspace, model, "-p", "/review modules/vpc")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "looks fine"
    assert model.requests[0]["messages"][-1] == {"role": "user", "content": "Review modules/vpc for security."}


def test_an_mcp_prompt_is_rendered_by_its_server_and_a_bad_one_fails_the_run(workspace):
    config, word = workspace.parent / "config", marker()
    config.mkdir()
    spec = fixture_server("infra", word)
    servers = {"infra": {"command": spec.command, "args": list(spec.args), "env": dict(spec.env)}}
    (config / "config.json").write_text(json.dumps({"mcpServers": servers}))
    with ScriptedOpenAI([{"text": "reviewed"}]) as model:
        rendered = run(workspace, model, "-p", "/mcp__infra__review aws_s3_bucket.logs")
        missing = run(workspace, model, "-p", "/mcp__infra__review")
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.strip() == "reviewed"
    sent = model.requests[0]["messages"][-1]["content"]
    assert sent == "Review the Terraform resource aws_s3_bucket.logs for security issues."
    assert missing.returncode == 1 and len(model.requests) == 1, "a command that cannot run calls no model"
    assert "iac-code: [MCP] /mcp__infra__review needs resource" in missing.stderr
    assert processes_with(word) == []


def test_an_unknown_slash_word_goes_to_the_model_as_typed(workspace):
    with ScriptedOpenAI([{"text": "fixed"}]) as model:
        result = run(workspace, model, "-p", "/etc/hosts has the wrong entry")
    assert result.returncode == 0, result.stderr
    assert model.requests[0]["messages"][-1]["content"] == "/etc/hosts has the wrong entry"


def test_a_skill_is_a_command_and_a_bad_skill_is_named_on_stderr(workspace):
    folder = workspace / ".iac-code" / "skills" / "tagging"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: tagging\ndescription: Tags. Use when tagging.\n---\nTag with owner.\n")
    bad = workspace / ".iac-code" / "skills" / "Bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad\ndescription: x\n---\n")
    with ScriptedOpenAI([{"text": "tagged"}]) as model:
        result = run(workspace, model, "-p", "/tagging modules/vpc")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tagged"
    sent = model.requests[0]["messages"][-1]["content"]
    assert "Its instructions:\n\nTag with owner." in sent and sent.endswith("The user's request: modules/vpc")
    assert "- tagging: Tags. Use when tagging." in model.requests[0]["messages"][0]["content"]
    assert (
        result.stderr.count("iac-code: [skills] skipped ") == 1 and f"{bad / 'SKILL.md'}: `name` 'Bad'" in result.stderr
    )
