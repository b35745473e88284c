"""A client that stops reading (its end of stdout closed) mid-answer: the server stops cleanly and the
session on disk stays valid."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.e2e.acp.wire import model_env
from tests.e2e.sessions.flows import stored_messages

from iac_code.messages import Message, unanswered_tool_calls


def test_server_stops_when_stdout_is_gone_and_keeps_the_session(tmp_path, model):
    workspace = tmp_path / "work"
    workspace.mkdir()
    model.add({"text": "word " * 4000, "chunk_chars": 10, "delay": 0.001})
    proc = subprocess.Popen(
        [sys.executable, "-m", "iac_code.cli", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=model_env(model.url, tmp_path / "config"),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}})
    session_id = None
    while session_id is None:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == 2:
            session_id = message["result"]["sessionId"]
    send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
        }
    )
    while "agent_message_chunk" not in proc.stdout.readline().decode():
        pass
    proc.stdout.close()  # the client vanishes; its stdin side stays open

    assert proc.wait(timeout=15) == 0
    assert b"the client is gone" in proc.stderr.read()
    history = [Message.from_dict(data) for data in stored_messages(tmp_path / "config", session_id)]
    assert [m.role for m in history][:2] == ["user", "assistant"]
    assert history[1].text.startswith("word"), "what was streamed before the client left is kept"
    assert unanswered_tool_calls(history) == []
    proc.stdin.close()
