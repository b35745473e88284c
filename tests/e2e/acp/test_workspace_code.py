"""Code a repository ships is execution: iac_check asks before `terraform validate` starts the provider
plugins of a committed `.terraform/`, refuses in read-only and plan modes, and never runs them unasked,
not even when bypassing permissions. The fake provider is a script that leaves a marker when started."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import model_env, select, updates
from tests.fakes.openai_server import ScriptedOpenAI

pytestmark = pytest.mark.skipif(shutil.which("terraform") is None, reason="terraform is not on PATH")

PROVIDER_DIR = ".terraform/providers/registry.terraform.io/hashicorp/null/3.2.0/linux_amd64"
MAIN_TF = """\
terraform {
  required_providers {
    null = { source = "hashicorp/null", version = "3.2.0" }
  }
}

resource "null_resource" "x" {}
"""
QUESTION = "iac_check wants to run terraform validate, which starts the provider plugins in net/.terraform"
SUBJECT = "iac_check:terraform-validate"


def hostile_repository(workspace: Path, marker: Path) -> Path:
    """`net/`: a configuration whose committed `.terraform/` holds a "provider" that writes `marker`, with a
    lock file whose h1 hash matches it, so terraform validate starts it."""
    net = workspace / "net"
    plugin_dir = net / PROVIDER_DIR
    plugin_dir.mkdir(parents=True)
    plugin = plugin_dir / "terraform-provider-null_v3.2.0"
    plugin.write_text(f"#!/bin/sh\necho started >> {marker}\nexit 1\n")
    plugin.chmod(0o755)
    (net / "main.tf").write_text(MAIN_TF)
    summary = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(plugin_dir.iterdir()))
    h1 = base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()
    (net / ".terraform.lock.hcl").write_text(
        'provider "registry.terraform.io/hashicorp/null" {\n'
        '  version     = "3.2.0"\n'
        '  constraints = "3.2.0"\n'
        f'  hashes = [\n    "h1:{h1}",\n  ]\n}}\n'
    )
    return net


def check(path: str = "net") -> dict[str, Any]:
    return {"tool_calls": [{"name": "iac_check", "arguments": {"path": path, "checks": ["terraform-validate"]}}]}


def permission_requests(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"] for m in seen if m.get("method") == "session/request_permission"]


def raw_result(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done["rawOutput"]


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "provider-started"


def test_validate_asks_before_starting_shipped_providers_and_a_rejection_runs_nothing(agent, model, workspace, marker):
    hostile_repository(workspace, marker)
    session_id = agent.new_session(workspace)
    model.add(check(), {"text": "not validated"})
    _, seen = agent.prompt(session_id, "validate net", select("reject_once"))
    (asked,) = permission_requests(seen)
    (start,) = updates(seen, "tool_call")
    assert asked["toolCall"]["toolCallId"] == start["toolCallId"]  # the running iac_check call asks
    assert asked["toolCall"]["title"] == QUESTION
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert not marker.exists()
    raw = raw_result(seen)
    assert raw["ran"] == []
    (skipped,) = raw["skipped"]
    assert skipped["tool"] == "terraform-validate" and skipped["reason"].startswith("Permission denied")
    assert "net/.terraform" in skipped["reason"]


def test_allow_always_runs_them_and_is_not_asked_again_in_the_session(agent, model, workspace, marker):
    net = hostile_repository(workspace, marker)
    session_id = agent.new_session(workspace)
    model.add(check(), {"text": "validated"})
    _, seen = agent.prompt(session_id, "validate net", select("allow_always"))
    assert len(permission_requests(seen)) == 1
    assert marker.read_text().count("started") >= 1
    assert raw_result(seen)["ran"] == ["terraform-validate"]

    marker.unlink()
    (net / "main.tf").write_text(MAIN_TF + "\n# edited: the cache cannot answer\n")
    model.add(check(), {"text": "validated again"})
    _, seen = agent.prompt(session_id, "validate net again")  # any permission request fails the prompt helper
    assert permission_requests(seen) == [] and marker.exists()


@pytest.mark.parametrize("mode", ["read-only", "plan"])
def test_read_only_and_plan_modes_never_start_them(agent, model, workspace, marker, mode):
    hostile_repository(workspace, marker)
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add(check(), {"text": "skipped"})
    _, seen = agent.prompt(session_id, "validate net")
    assert permission_requests(seen) == [] and not marker.exists()
    (skipped,) = raw_result(seen)["skipped"]
    assert "read-only or plan mode" in skipped["reason"]
    assert (
        "Skipped: terraform-validate (not run in read-only or plan mode"
        in model.requests[-1]["messages"][-1]["content"]
    )


def test_bypass_permissions_still_asks_the_first_time(agent, model, workspace, marker):
    hostile_repository(workspace, marker)
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(check(), {"text": "not validated"})
    _, seen = agent.prompt(session_id, "validate net", select("reject_always"))
    assert len(permission_requests(seen)) == 1 and not marker.exists()

    model.add(check(), {"text": "still not"})
    _, seen = agent.prompt(session_id, "validate net again")  # remembered "never": refused unasked
    assert permission_requests(seen) == [] and not marker.exists()
    assert raw_result(seen)["skipped"][0]["reason"].startswith("Permission denied")


def test_an_initialized_directory_without_shipped_plugins_is_validated_unasked(agent, model, workspace, marker):
    net = workspace / "net"
    (net / ".terraform").mkdir(parents=True)
    (net / "main.tf").write_text('resource "terraform_data" "x" {\n  input = "a"\n}\n')
    session_id = agent.new_session(workspace)
    model.add(check(), {"text": "valid"})
    _, seen = agent.prompt(session_id, "validate net")
    assert permission_requests(seen) == []
    assert raw_result(seen)["ran"] == ["terraform-validate"]


def run_headless(workspace: Path, model: ScriptedOpenAI, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "-p", "validate net", *flags],
        cwd=workspace,
        env=model_env(model.url, workspace.parent / "config"),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_headless_yes_does_not_cover_them_and_allow_tools_names_them(workspace, marker):
    hostile_repository(workspace, marker)
    with ScriptedOpenAI([check(), {"text": "done"}]) as model:
        result = run_headless(workspace, model, "--yes")
    assert result.returncode == 0, result.stderr
    assert f"denied {SUBJECT} ({QUESTION}: allow it with --allow-tools {SUBJECT})" in result.stderr
    assert not marker.exists()

    with ScriptedOpenAI([check(), {"text": "done"}]) as model:
        result = run_headless(workspace, model, "--allow-tools", SUBJECT)
    assert result.returncode == 0, result.stderr
    assert marker.exists()
