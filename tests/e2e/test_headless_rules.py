"""Permission rules in `iac-code -p`: a deny rule holds with --yes; a project's allow rules apply only when
config.json's trustedProjects lists it (an answer remembered by /permissions trust does not count here); a
bad rule exits 2 naming its file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.acp.test_rules import bash, project_rules
from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI


def run(workspace: Path, model: ScriptedOpenAI, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "-p", "go", *flags],
        cwd=workspace,
        env=model_env(model.url, workspace.parent / "config"),
        capture_output=True,
        text=True,
        timeout=60,
    )


def config(workspace: Path, **settings: Any) -> None:
    directory = workspace.parent / "config"
    directory.mkdir(exist_ok=True)
    (directory / "config.json").write_text(json.dumps(settings))


def test_a_deny_rule_holds_with_yes_and_the_model_is_told(workspace: Path) -> None:
    file = project_rules(workspace, {"deny": ["Bash(touch *)"]})
    with ScriptedOpenAI([bash("sudo touch made"), {"text": "could not"}]) as model:
        result = run(workspace, model, "--yes")
    assert result.returncode == 0, result.stderr
    assert not (workspace / "made").exists()
    assert model.requests[1]["messages"][-1]["content"] == f'Denied by rule "Bash(touch *)" in {file}'


def test_a_projects_allow_rule_applies_only_when_trusted_projects_lists_it(workspace: Path) -> None:
    project_rules(workspace, {"allow": ["Bash(touch *)"]})
    trust_file = workspace.parent / "config" / "trusted-projects.json"
    trust_file.parent.mkdir()
    trust_file.write_text(json.dumps({"projects": [str(workspace.resolve())]}))  # /permissions trust's answer
    with ScriptedOpenAI([bash("touch untrusted"), {"text": "ok"}]) as model:
        run(workspace, model)
    assert not (workspace / "untrusted").exists()

    config(workspace, trustedProjects=[str(workspace)])
    with ScriptedOpenAI([bash("touch trusted"), {"text": "ok"}]) as model:
        result = run(workspace, model)
    assert result.returncode == 0, result.stderr
    assert (workspace / "trusted").exists()


def test_a_bad_project_rule_exits_2_naming_the_file(workspace: Path) -> None:
    file = project_rules(workspace, {"ask": ["Write(**"]})  # no closing parenthesis: no rule
    with ScriptedOpenAI([{"text": "never asked"}]) as model:
        result = run(workspace, model)
    assert result.returncode == 2
    assert f"iac-code: {file}: bad rule" in result.stderr and '"Write(**"' in result.stderr
    assert model.requests == []


def test_a_bad_user_rule_exits_2_naming_config_json(workspace: Path) -> None:
    config(workspace, permissions={"deny": ["Plan(delete)"]})
    with ScriptedOpenAI([{"text": "never asked"}]) as model:
        result = run(workspace, model)
    assert result.returncode == 2
    assert str(workspace.parent / "config" / "config.json") in result.stderr and "Plan(delete)" in result.stderr
