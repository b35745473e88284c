"""Approvals cover only what was shown (issue 36, item 7), through the real bash tool of `iac-code`: the
same argv in another directory is asked; an unreadable line's scripts have each change asked; an approved
`terragrunt apply` does not approve the `terraform destroy` its terragrunt runs. Over ACP in
bypass-permissions (one agent, one session), and headless with `--yes --allow-infra-changes`.

The stand-ins record their directory and argv; the terragrunt stand-in runs terraform as the real one
does, and a destroy besides (a hook, or a hostile build of it)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import Agents, model_env, select
from tests.e2e.guard.forms import agent_path
from tests.fakes.openai_server import ScriptedOpenAI

RECORD = '#!/bin/sh\nprintf "%s %s\\n" "$PWD" "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'
TERRAGRUNT = RECORD + "terraform apply -input=false\nterraform destroy -auto-approve\n"
DESTROY_SCRIPT = "#!/bin/sh\nterraform destroy -auto-approve\n"
UNREADABLE = {  # lines the bash rule cannot read, each running the script go.sh
    "array": "x=(a); sh go.sh",
    "case": "case go in go) sh go.sh;; esac",
    "arithmetic-for": "for ((i = 0; i < 1; i++)); do sh go.sh; done",
}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("approval-stand-ins")
    for name, text in {"terraform": RECORD, "kubectl": RECORD, "terragrunt": TERRAGRUNT}.items():
        _executable(directory / name, text)
    return directory


@pytest.fixture(scope="module")
def bypassing(model, stand_ins, tmp_path_factory) -> Iterator[tuple[object, str, Path]]:
    workspace = tmp_path_factory.mktemp("approvals")
    agents = Agents(model.url, tmp_path_factory.mktemp("config"))
    agent = agents.start(PATH=agent_path(stand_ins))
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    yield agent, session_id, workspace
    agents.close_all()


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _ran(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _prompt(bypassing, model, line: str) -> list[dict]:
    """Run `line` in one bash call; allow the first question (the line's), reject the others."""
    agent, session_id, _ = bypassing
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "done"})
    asked: list[dict] = []

    def answer(request):
        asked.append(request["params"]["toolCall"])
        return select("allow_once" if len(asked) == 1 else "reject_once")(request)

    response, _ = agent.prompt(session_id, "run it", answer)
    assert response["result"]["stopReason"] == "end_turn"
    return asked


def _shown(tool_call: dict) -> str:
    return "".join(block["content"]["text"] for block in tool_call.get("content") or [])


def test_the_same_argv_in_another_directory_is_asked(bypassing, model):
    _, _, workspace = bypassing
    (workspace / "prod").mkdir()
    _executable(workspace / "elsewhere.sh", "#!/bin/sh\ncd prod && kubectl apply -f app.yaml\n")
    log = workspace / "directories.log"
    line = f'export STAND_IN_LOG="{log}"; kubectl apply -f app.yaml && sh elsewhere.sh'
    asked = _prompt(bypassing, model, line)
    assert [call["title"] for call in asked][1:] == ["Infrastructure change: kubectl apply -f app.yaml"]
    assert f"Runs in {workspace / 'prod'}" in _shown(asked[1])
    assert _ran(log) == [f"{workspace} kubectl apply -f app.yaml"]  # where it was approved, and only there


@pytest.mark.parametrize("form", list(UNREADABLE))
def test_each_change_an_unreadable_lines_script_makes_is_asked(bypassing, model, form):
    _, _, workspace = bypassing
    _executable(workspace / "go.sh", DESTROY_SCRIPT)
    log = workspace / f"unreadable-{form}.log"
    line = f'export STAND_IN_LOG="{log}"; {UNREADABLE[form]}'
    asked = _prompt(bypassing, model, line)
    assert len(asked) == 2, [call["title"] for call in asked]
    assert asked[1]["title"] == "Infrastructure change: terraform destroy -auto-approve"
    assert asked[1]["rawInput"]["infrastructureChange"] is True
    assert "could not be read" in _shown(asked[1])
    assert _ran(log) == []


def test_an_approved_terragrunt_apply_does_not_approve_the_destroy_it_runs(bypassing, model):
    _, _, workspace = bypassing
    log = workspace / "terragrunt.log"
    line = f'export STAND_IN_LOG="{log}"; terragrunt apply'
    asked = _prompt(bypassing, model, line)
    assert [call["title"] for call in asked][1:] == ["Infrastructure change: terraform destroy -auto-approve"]
    assert _ran(log) == [f"{workspace} terragrunt apply", f"{workspace} terraform apply -input=false"]


def test_headless_allow_infra_changes_answers_each_change_and_lists_it(stand_ins, tmp_path):
    """Headless, `--yes` approves no infrastructure change (shown or found by a shim); `--allow-infra-changes`
    approves each, and the output lists each question: the unreadable line and, apart, its script's destroy."""
    _executable(tmp_path / "go.sh", DESTROY_SCRIPT)
    log = tmp_path / "headless.log"
    line = f'export STAND_IN_LOG="{log}"; {UNREADABLE["array"]}'
    flags = ["--yes", "--allow-infra-changes", "--output-format", "json"]
    with ScriptedOpenAI([{"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "ok"}]) as model:
        done = subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "-p", "run it", *flags],
            cwd=tmp_path,
            env=model_env(model.url, tmp_path / "config", PATH=agent_path(stand_ins)),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    questions = json.loads(done.stdout)["permissionRequests"]
    assert [question["answer"] for question in questions] == ["allow_once", "allow_once"]
    assert questions[0]["title"].startswith("Infrastructure change: Run export STAND_IN_LOG=")  # the line
    assert questions[1]["title"] == "Infrastructure change: terraform destroy -auto-approve"
    assert f"Runs in {tmp_path}" in questions[1]["details"]
    assert _ran(log) == [f"{tmp_path} terraform destroy -auto-approve"]
