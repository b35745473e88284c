"""`iac-code -p` as a subprocess against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI

WRITE_MAIN_TF = {
    "tool_calls": [
        {"name": "write_file", "arguments": {"path": "main.tf", "content": 'resource "null_resource" "x" {}\n'}}
    ]
}


def run(workspace, model, *flags: str, stdin: str | None = None, env_extra=None) -> subprocess.CompletedProcess:
    env = model_env(model.url, workspace.parent / "config", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", *flags],
        cwd=workspace,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_write_is_denied_without_flags_and_the_model_is_told(workspace):
    with ScriptedOpenAI([WRITE_MAIN_TF, {"text": "could not write"}]) as model:
        result = run(workspace, model, "-p", "create main.tf")
    assert result.returncode == 0
    assert not (workspace / "main.tf").exists()
    assert "denied write_file" in result.stderr
    tool_message = model.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "Permission denied."
    assert result.stdout.strip() == "could not write"


@pytest.mark.parametrize("flags", [["--allow-tools", "write_file"], ["--yes"]])
def test_write_runs_when_the_flags_allow_it(workspace, flags):
    with ScriptedOpenAI([WRITE_MAIN_TF, {"text": "written"}]) as model:
        result = run(workspace, model, "-p", "create main.tf", *flags)
    assert result.returncode == 0, result.stderr
    assert (workspace / "main.tf").read_text() == 'resource "null_resource" "x" {}\n'


def test_allowing_one_tool_does_not_allow_another(workspace):
    bash_call = {"tool_calls": [{"name": "bash", "arguments": {"command": "touch made-by-bash"}}]}
    with ScriptedOpenAI([bash_call, {"text": "ok"}]) as model:
        run(workspace, model, "-p", "go", "--allow-tools", "write_file")
    assert not (workspace / "made-by-bash").exists()


@pytest.mark.parametrize("names", ["write-file", "write_file,Bash", "iac_check:nope"])
def test_an_unknown_tool_name_is_a_usage_error_listing_the_valid_ones(workspace, names):
    with ScriptedOpenAI([WRITE_MAIN_TF, {"text": "never"}]) as model:
        result = run(workspace, model, "-p", "create main.tf", "--allow-tools", names)
    assert result.returncode == 2 and model.requests == []
    [line] = result.stderr.splitlines()
    assert line.startswith("iac-code: --allow-tools: unknown ")
    assert "write_file" in line and "iac_check:terraform-validate" in line and "mcp__<server>__<tool>" in line


def test_mcp_tool_names_are_taken_as_given(workspace):
    with ScriptedOpenAI([{"text": "fine"}]) as model:
        result = run(workspace, model, "-p", "go", "--allow-tools", "mcp__k8s__get_pods,iac_plan:providers")
    assert result.returncode == 0, result.stderr


def test_prompt_from_stdin_and_json_output(workspace):
    with ScriptedOpenAI(
        [{"text": "Hello from the model", "usage": {"prompt_tokens": 12, "completion_tokens": 4}}]
    ) as model:
        result = run(workspace, model, "-p", "-", "--output-format", "json", stdin="explain main.tf")
    assert result.returncode == 0
    out = json.loads(result.stdout)
    assert out["result"] == "Hello from the model"
    assert out["stopReason"] == "end_turn"
    assert out["usage"] == {
        "inputTokens": 12,
        "outputTokens": 4,
        "thoughtTokens": 0,
        "cachedReadTokens": 0,
        "cachedWriteTokens": 0,
        "totalTokens": 16,
    }
    assert out["cost"] is None  # the scripted model has no price
    assert model.requests[0]["messages"][-1] == {"role": "user", "content": "explain main.tf"}


def test_stream_json_emits_one_event_per_line(workspace):
    with ScriptedOpenAI([WRITE_MAIN_TF, {"text": "done"}]) as model:
        result = run(workspace, model, "-p", "go", "--yes", "--output-format", "stream-json")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types.index("tool_use") < types.index("tool_running") < types.index("tool_result") < types.index("result")
    assert events[-1]["stopReason"] == "end_turn"


def test_non_end_turn_exits_non_zero(workspace):
    with ScriptedOpenAI([{"text": "trunc", "finish_reason": "length"}]) as model:
        result = run(workspace, model, "-p", "go")
    assert result.returncode == 1
    assert "max_tokens" in result.stderr


def test_misconfiguration_is_one_clear_line(workspace):
    with ScriptedOpenAI() as model:
        result = run(workspace, model, "-p", "go", env_extra={"IAC_CODE_PROVIDER": "nonsense"})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "IAC_CODE_PROVIDER" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("failure", [{"status": 401}, {"status": 500}, "unreachable"])
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_failed_model_call_exits_non_zero_with_the_error(workspace, failure, output_format):
    with ScriptedOpenAI(default=failure if isinstance(failure, dict) else None) as model:
        env = {"IAC_CODE_BASE_URL": "http://127.0.0.1:9/v1"} if failure == "unreachable" else {}
        result = run(workspace, model, "-p", "hi", "--output-format", output_format, env_extra=env)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    [error_line] = [line for line in result.stderr.splitlines() if line.startswith("iac-code: error: ")]
    if output_format == "json":
        out = json.loads(result.stdout)
        assert out["errors"] and out["errors"][0] in error_line
        assert out["stopReason"] == "error", "a failed model call is not a turn that ended normally"


def demo(workspace, *flags: str) -> subprocess.CompletedProcess:
    """The offline demo (no provider configured), allowed to write."""
    with ScriptedOpenAI() as model:
        return run(workspace, model, "-p", "add an S3 bucket", "--yes", *flags, env_extra={"IAC_CODE_PROVIDER": ""})


def test_the_demo_never_overwrites_an_existing_file(workspace):
    (workspace / "main.tf").write_text("# mine\n")
    result = demo(workspace)
    assert result.returncode == 0, result.stderr
    assert (workspace / "main.tf").read_text() == "# mine\n"
    assert "already exists" in result.stdout and 'resource "alicloud_vpc"' in result.stdout
    assert sorted(p.name for p in workspace.iterdir()) == ["main.tf"]


def test_the_demo_writes_main_tf_where_there_is_none(workspace):
    result = demo(workspace)
    assert result.returncode == 0, result.stderr
    assert 'resource "alicloud_vpc"' in (workspace / "main.tf").read_text()
    assert "terraform init && terraform validate" in result.stdout


APPLY = "./terraform apply -auto-approve"  # a stand-in terraform: what it "applies" lands in applied.log


@pytest.mark.parametrize(
    ("flags", "applied"),
    [
        (["--yes"], False),
        (["--allow-tools", "bash"], False),
        (["--yes", "--allow-infra-changes"], True),
        (["--allow-infra-changes"], True),
    ],
    ids=["yes", "allow-tools-bash", "yes-and-infra", "infra-only"],
)
def test_only_allow_infra_changes_lets_an_infrastructure_change_run(workspace, flags, applied):
    terraform = workspace / "terraform"
    terraform.write_text('#!/bin/sh\necho "$@" >> applied.log\n')
    terraform.chmod(0o755)
    calls = [{"name": "bash", "arguments": {"command": APPLY}}, {"name": "bash", "arguments": {"command": "touch x"}}]
    with ScriptedOpenAI([{"tool_calls": calls}, {"text": "done"}]) as model:
        result = run(workspace, model, "-p", "apply it", *flags)
    assert result.returncode == 0, result.stderr
    assert (workspace / "applied.log").exists() is applied
    apply_result, touch_result = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    if applied:
        assert "Permission denied." not in apply_result
    else:
        assert apply_result == "Permission denied."
        assert "denied bash (an infrastructure change: allow those with --allow-infra-changes)" in result.stderr
    # --allow-infra-changes covers infrastructure changes only: a plain command still needs its own flag
    assert (workspace / "x").exists() is (flags != ["--allow-infra-changes"])
    assert (touch_result == "Permission denied.") is (flags == ["--allow-infra-changes"])


def test_allow_infra_changes_is_a_headless_option(workspace):
    with ScriptedOpenAI() as model:
        result = run(workspace, model, "--allow-infra-changes")
    assert result.returncode == 2
    assert "--allow-infra-changes applies to a headless run" in result.stderr


def test_json_output_carries_the_cached_tokens_and_the_cost_with_a_price(workspace):
    config = workspace.parent / "config"
    config.mkdir(exist_ok=True)
    price = {"input": 1.0, "output": 4.0, "cache_read": 0.1, "cache_write": 1.0, "currency": "USD"}
    (config / "config.json").write_text(json.dumps({"prices": {"scripted-model": price}}))
    usage = {"prompt_tokens": 2_000, "completion_tokens": 100, "cached_tokens": 1_500}
    with ScriptedOpenAI([{"text": "Done.", "usage": usage}]) as model:
        result = run(workspace, model, "-p", "hello", "--output-format", "json")
    out = json.loads(result.stdout)
    assert out["usage"]["cachedReadTokens"] == 1_500 and out["usage"]["inputTokens"] == 2_000
    expected = (500 * 1.0 + 1_500 * 0.1 + 100 * 4.0) / 1_000_000
    assert out["cost"] == {"amount": pytest.approx(expected), "currency": "USD"}
