"""What a guard's shim prints when the run it asked about is refused, through the real bash tool of
`iac-code`: the policy decides (the user's reject, plan mode, headless's flags) and the shim says it in its
own words on the command's stderr, which the model reads in the call's result. Over ACP (one agent, a
session per mode) and headless with `--yes`."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents, model_env, select
from tests.e2e.guard.forms import agent_path
from tests.fakes.openai_server import ScriptedOpenAI

from iac_code.agent.policy import PLAN_MODE_REFUSAL

RECORD = '#!/bin/sh\nprintf "%s\\n" "$(basename "$0") $*" >> "$STAND_IN_LOG"\n'
# The line shows no change (a script runs): the destroy is found by the terraform shim, and asked on its own.
DESTROY_SCRIPT = "#!/bin/sh\nterraform destroy -auto-approve\n"
SHIM = "iac-code: terraform: "


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("shim-words-stand-ins")
    _executable(directory / "terraform", RECORD)
    return directory


@pytest.fixture(scope="module")
def agent(model, stand_ins, tmp_path_factory) -> Iterator[AgentProcess]:
    agents = Agents(model.url, tmp_path_factory.mktemp("config"))
    yield agents.start(PATH=agent_path(stand_ins))
    agents.close_all()


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _line(workspace: Path) -> str:
    _executable(workspace / "go.sh", DESTROY_SCRIPT)
    return f'export STAND_IN_LOG="{workspace / "ran.log"}"; sh go.sh'


def _bash_result(model) -> str:
    (result,) = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    return result


@pytest.mark.parametrize(
    ("mode", "answers", "words"),
    [
        ("default", ["allow_once", "reject_once"], "refused by the user"),  # the line allowed, the destroy not
        ("plan", ["allow_once"], f"refused: {PLAN_MODE_REFUSAL}"),  # refused unasked: plan mode changes nothing
    ],
)
def test_a_refused_run_is_said_in_the_shims_words(agent, model, tmp_path, mode, answers, words):
    session_id = agent.new_session(tmp_path)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": _line(tmp_path)}}]}, {"text": "done"})
    asked: list[str] = []

    def answer(request):
        asked.append(request["params"]["toolCall"]["title"])
        return select(answers[len(asked) - 1])(request)

    response, _ = agent.prompt(session_id, "run it", answer)
    assert response["result"]["stopReason"] == "end_turn"
    assert len(asked) == len(answers), asked
    assert SHIM + words in _bash_result(model)
    assert not (tmp_path / "ran.log").exists()


def test_headless_yes_refuses_the_change_a_shim_found(stand_ins, tmp_path):
    line = _line(tmp_path)
    with ScriptedOpenAI([{"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "ok"}]) as model:
        done = subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "-p", "run it", "--yes"],
            cwd=tmp_path,
            env=model_env(model.url, tmp_path / "config", PATH=agent_path(stand_ins)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        result = _bash_result(model)
    assert done.returncode == 0, done.stderr
    assert "iac-code: denied bash (an infrastructure change: allow those with --allow-infra-changes)" in done.stderr
    assert SHIM + "refused by the user" in result
    assert not (tmp_path / "ran.log").exists()
