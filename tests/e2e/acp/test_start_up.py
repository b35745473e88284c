"""Start-up and end of `iac-code acp` on stdio with unusual standard streams or settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.e2e.acp.wire import model_env

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})


def run_acp(env: dict[str, str], stdin, timeout: float = 15) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "acp"], stdin=stdin, capture_output=True, env=env, timeout=timeout
    )


@pytest.mark.parametrize("kind", ["/dev/null", "empty file", "file with a request"])
def test_stdin_that_cannot_be_polled_is_read_to_its_end(tmp_path, kind):
    env = model_env("http://127.0.0.1:9/v1", tmp_path / "config")
    source = tmp_path / "input"
    source.write_text(INITIALIZE + "\n" if kind == "file with a request" else "")
    with open("/dev/null" if kind == "/dev/null" else source, "rb") as stdin:
        result = run_acp(env, stdin)
    assert result.returncode == 0
    assert b"Traceback" not in result.stderr and b"ERROR" not in result.stderr
    if kind == "file with a request":
        assert json.loads(result.stdout)["result"]["protocolVersion"] == 1
    else:
        assert result.stdout == b""


def unwritable_config_dir(tmp_path):
    """A config directory whose session database cannot be written (a directory has its name), even for root."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "iac-code.db").mkdir()
    return config


def test_an_unwritable_config_dir_answers_session_new_with_an_error(tmp_path):
    from tests.e2e.acp.wire import AgentProcess

    agent = AgentProcess(model_env("http://127.0.0.1:9/v1", unwritable_config_dir(tmp_path)))
    try:
        agent.initialize()
        error = agent.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})["error"]
        assert error["code"] == -32603
        assert (
            "IAC_CODE_CONFIG_DIR" in error["message"] and str(tmp_path / "config" / "iac-code.db") in error["message"]
        )
        assert agent.call("session/list", {})["error"]["code"] == -32603
        assert agent.result("initialize", {"protocolVersion": 1})["protocolVersion"] == 1, "still serving"
    finally:
        assert agent.close() == 0
    assert "Traceback" not in "".join(agent.stderr_lines)
