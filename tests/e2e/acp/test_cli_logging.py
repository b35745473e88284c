"""`iac-code acp --debug --log-file`: frames go to the log, never to stdout."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.e2e.acp.wire import model_env


def test_debug_log_file_records_frames_and_stdout_stays_protocol(tmp_path, model):
    log_file = tmp_path / "acp.log"
    env = model_env(model.url, tmp_path / "config", IAC_CODE_API_KEY="sk-do-not-log-4242")
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "iac_code.cli", "acp", "--debug", "--log-file", str(log_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for request in requests:
        proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    answered = set()
    while answered != {1, 2}:
        message = json.loads(proc.stdout.readline())  # every stdout line must be JSON
        answered.add(message.get("id"))
    proc.stdin.close()
    assert proc.wait(timeout=20) == 0
    rest, stderr = proc.stdout.read(), proc.stderr.read()
    assert all(json.loads(line) for line in rest.splitlines())
    log = log_file.read_text()
    assert '"method": "session/new"' in log, "incoming frames are logged at debug level"
    assert '"sessionId"' in log, "outgoing frames are logged too"
    assert b"session/new" in stderr, "the log also goes to stderr"
    assert "sk-do-not-log-4242" not in log and b"sk-do-not-log-4242" not in stderr
