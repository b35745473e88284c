"""One headless run (`iac-code -p`) whose scripted model runs a list of bash command lines in one turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI


def bash_results(
    workspace: Path, lines: list[str], flags: list[str], config: Path, path: str, **extra_env: str
) -> list[str]:
    """The tool results the model read, one per line in order, after a run in `workspace` with `flags`, the
    config dir `config`, `path` as PATH and `extra_env`; the run must end normally."""
    calls = [{"name": "bash", "arguments": {"command": line}} for line in lines]
    with ScriptedOpenAI([{"tool_calls": calls}, {"text": "done"}]) as model:
        done = subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "-p", "run them", *flags],
            cwd=workspace,
            env=model_env(model.url, config, PATH=path, **extra_env),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    return [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
