"""The guard's token is in each command's environment, but the model never reads it in a command's output."""

from __future__ import annotations

from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI

from iac_code.redaction import marker
from iac_code.tools.shell import GUARD_TOKEN_NAME


def test_the_token_is_withheld_from_the_output(workspace):
    call = {"name": "bash", "arguments": {"command": "env | grep IAC_CODE_GUARD_TOKEN"}}
    with ScriptedOpenAI([{"tool_calls": [call]}, {"text": "done"}]) as model:
        result = run(workspace, model, "-p", "show it", "--yes")
    assert result.returncode == 0, result.stderr
    (output,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert output == f"IAC_CODE_GUARD_TOKEN={marker(GUARD_TOKEN_NAME)}\nExit code: 0"
