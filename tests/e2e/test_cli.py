"""The command line itself: wrong combinations say what is wrong, a closed pipe ends quietly, --help documents."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI


def iac_code(*args: str, env: dict[str, str], cwd=None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "iac_code.cli", *args]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=30)


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return model_env("http://127.0.0.1:9/v1", tmp_path / "config")


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path, env):
    with ScriptedOpenAI([{"text": "word " * 200_000, "chunk_chars": 4096}]) as model:
        env = model_env(model.url, tmp_path / "config")
        shell = f'"{sys.executable}" -m iac_code.cli -p hi 2> stderr.txt | head -c 100 > /dev/null'
        subprocess.run(["bash", "-c", shell], cwd=tmp_path, env=env, timeout=60, check=True)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--yes"], "--yes"),
        (["--allow-tools", "bash"], "--allow-tools"),
        (["--output-format", "json"], "--output-format"),
        (["-p", "hi", "acp"], "-p"),
        (["--yes", "acp"], "--yes"),
    ],
)
def test_flags_that_cannot_apply_are_an_error_naming_them(env, args, named):
    result = iac_code(*args, env=env)
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("iac-code: error: ") and named in last


def test_no_command_and_no_prompt_says_what_to_give(env):
    result = iac_code(env=env)
    assert result.returncode == 2
    assert "-p PROMPT" in result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("args", [["--help"], ["acp", "--help"]])
def test_help_lists_the_environment_variables_and_exit_codes(env, args):
    from iac_code.config import ENV_KEYS
    from iac_code.credentials import SECRET_VARIABLES

    result = iac_code(*args, env=env)
    assert result.returncode == 0
    for variable in [*ENV_KEYS.values(), *SECRET_VARIABLES, "IAC_CODE_CONFIG_DIR"]:
        assert variable in result.stdout, variable
    exit_codes = result.stdout.split("exit codes:")[1]
    assert all(f"  {code} " in exit_codes for code in (0, 1, 2))
