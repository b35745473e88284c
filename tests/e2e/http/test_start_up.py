"""`iac-code acp --transport http` refuses to start, with one line and exit code 2, when it could not serve."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from tests.e2e.http.server_process import IAC_CODE, model_env


def start(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **model_env("http://127.0.0.1:9/v1", tmp_path / "config"), **env}
    command = [str(IAC_CODE), "acp", "--transport", "http", *args]
    return subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=30)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    return line


def test_a_port_in_use_is_one_line_naming_the_flag(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line(start(tmp_path, "--port", str(port)))
    assert f"port {port}" in line and "already in use" in line and "--port" in line


def test_a_port_out_of_range_is_one_line(tmp_path):
    line = one_line(start(tmp_path, "--port", "99999"))
    assert "--port" in line and "99999" in line


def test_an_unwritable_config_dir_stops_the_start(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "iac-code.db").mkdir()  # a directory where the session database should be
    line = one_line(start(tmp_path, "--port", "0"))
    assert "IAC_CODE_CONFIG_DIR" in line and "sessions" in line


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"IAC_CODE_PROVIDER": "nonsense"}, "IAC_CODE_PROVIDER"),
        ({"IAC_CODE_PROVIDER": "openai", "IAC_CODE_API_KEY": "", "OPENAI_API_KEY": ""}, "OPENAI_API_KEY"),
        ({"IAC_CODE_PROVIDER": "openai_compatible", "IAC_CODE_BASE_URL": ""}, "IAC_CODE_BASE_URL"),
    ],
)
def test_a_bad_provider_stops_the_start(tmp_path, env, named):
    line = one_line(start(tmp_path, "--port", "0", **env))
    assert named in line


def test_make_run_takes_the_port_from_a_variable():
    root = Path(__file__).parents[3]
    dry_run = subprocess.run(
        ["make", "-n", "-C", str(root), "run", "PORT=9090"], capture_output=True, text=True, check=True
    )
    [command] = [line for line in dry_run.stdout.splitlines() if "acp --transport http" in line]
    assert "--port 9090" in command
