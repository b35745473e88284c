"""A secret a command prints reaches neither the model, nor the client, nor the session store, nor the log: the
agent's own model key and a cloud secret of its environment, read from a `.env` file in the workspace, plain,
in base64 (wrapped and not), in hex and reversed; a credentials file's secret key by its shape; the same
printed in the editor's terminal; an MCP server's result holding the key. Checked by decoding every base64
and hex run of what each of them got."""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import ContentToolCallContent, TextContentBlock
from tests.e2e.acp.editor import Editor, editing
from tests.e2e.acp.wire import AgentProcess, model_env, updates
from tests.e2e.mcp.servers import acp_form, fixture_server
from tests.e2e.mcp.through_agent import allow, call, open_session
from tests.e2e.sessions.flows import replayed

pytestmark = pytest.mark.timeout(120)

MODEL_KEY = "sk-proj-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"
CLOUD_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE"  # the agent's environment has it; no command does
FILE_ONLY_SECRET = "Je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"  # in a credentials file only: found by its shape
SECRETS = (MODEL_KEY, CLOUD_SECRET, FILE_ONLY_SECRET)

COMMAND = """\
cat .env
base64 .env
base64 -w0 .env; echo
xxd -p .env
grep IAC_CODE_API_KEY .env | cut -d= -f2 | rev
cat deploy/credentials
"""

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")


def revealed(text: str) -> list[str]:
    """The secrets `text` shows: as they are, reversed, or decoded from any run of base64 or hex in it (its
    wrapped lines joined), at any alignment."""
    found = {s for s in SECRETS if s in text or s[::-1] in text}
    joined = text.replace("\\n", "").replace("\n", "")  # JSON text keeps its line ends escaped
    for run in _BASE64_RUN.findall(joined):
        for start in range(4):
            chunk = run[start:].replace("-", "+").replace("_", "/")
            try:
                decoded = base64.b64decode(chunk[: len(chunk) - len(chunk) % 4])
            except binascii.Error:
                continue
            found |= {s for s in SECRETS if s.encode() in decoded}
    for run in _HEX_RUN.findall(joined):
        for start in range(2):
            decoded = bytes.fromhex(run[start:][: (len(run) - start) // 2 * 2])
            found |= {s for s in SECRETS if s.encode() in decoded}
    return sorted(found)


def test_the_oracle_sees_each_form_the_command_prints():
    env_file = f"IAC_CODE_API_KEY={MODEL_KEY}\n".encode()
    for form in (base64.encodebytes(b"x" * 70 + env_file).decode(), env_file.hex(), MODEL_KEY[::-1]):
        assert revealed(form) == [MODEL_KEY]


@pytest.fixture
def secrets_workspace(workspace: Path) -> Path:
    (workspace / ".env").write_text(
        f"# local settings\nIAC_CODE_API_KEY={MODEL_KEY}\nAWS_SECRET_ACCESS_KEY={CLOUD_SECRET}\nREGION=cn-hangzhou\n"
    )
    (workspace / "deploy").mkdir()
    (workspace / "deploy" / "credentials").write_text(
        f"[ci]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {FILE_ONLY_SECRET}\n"
    )
    return workspace


def start(model, config_dir: Path, log_file: Path) -> AgentProcess:
    env = model_env(model.url, config_dir, IAC_CODE_API_KEY=MODEL_KEY, AWS_SECRET_ACCESS_KEY=CLOUD_SECRET)
    agent = AgentProcess(env, "--debug", "--log-file", str(log_file))
    agent.initialize()
    return agent


def test_a_printed_secret_reaches_no_model_client_store_or_log(model, tmp_path, secrets_workspace):
    config_dir, log_file = tmp_path / "config", tmp_path / "agent.log"
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]}, {"text": "done"})
    first = start(model, config_dir, log_file)
    session_id = first.new_session(secrets_workspace)
    response, live = first.prompt(session_id, "show me the settings", allow())
    assert response["result"]["stopReason"] == "end_turn"
    assert first.close() == 0

    (tool_text,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "REGION=cn-hangzhou" in tool_text and "Exit code: 0" in tool_text  # the command ran, and is shown
    assert "IAC_CODE_API_KEY=[redacted: IAC_CODE_API_KEY]" in tool_text
    assert "aws_secret_access_key = [redacted: secret key]" in tool_text
    assert revealed(tool_text) == []
    assert revealed(json.dumps(model.requests)) == []
    assert revealed(json.dumps(live)) == []

    second = start(model, config_dir, log_file)  # a new process: only the store is shared
    load = second.start_request(
        "session/load", {"sessionId": session_id, "cwd": str(secrets_workspace), "mcpServers": []}
    )
    loaded, before = second.response(load)
    assert "result" in loaded, loaded
    assert second.close() == 0
    shown = json.dumps(replayed(before, session_id))
    assert "[redacted: IAC_CODE_API_KEY]" in shown
    assert revealed(shown) == []

    stored = b"".join(path.read_bytes() for path in config_dir.rglob("*") if path.is_file())
    assert b"[redacted: IAC_CODE_API_KEY]" in stored
    assert revealed(stored.decode(errors="replace")) == []
    log = log_file.read_text()
    assert "[redacted: IAC_CODE_API_KEY]" in log  # --debug logs every frame, the tool's output included
    assert revealed(log) == []


def test_an_mcp_result_holding_the_key_is_redacted(model, tmp_path, workspace):
    log_file = tmp_path / "agent.log"
    agent = start(model, tmp_path / "config", log_file)
    try:
        session_id, _ = open_session(agent, workspace, [acp_form(fixture_server())], ready=["fixture"])
        model.add(call("mcp__fixture__echo", text=f"the key is {MODEL_KEY}"), {"text": "done"})
        response, live = agent.prompt(session_id, "echo it", allow())
        assert response["result"]["stopReason"] == "end_turn"
    finally:
        assert agent.close() == 0
    (tool_text,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_text == "the key is [redacted: IAC_CODE_API_KEY]"
    (final,) = [u for u in updates(live, "tool_call_update") if u.get("status") == "completed"]
    assert final["rawOutput"]["content"] == [{"type": "text", "text": tool_text}]
    assert revealed(json.dumps(final)) == []


async def test_output_of_the_editor_s_terminal_is_redacted_and_shown_as_text(model, tmp_path, secrets_workspace):
    """The editor ran the command and has its output; the model, the store and the final update do not."""
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]}, {"text": "done"})
    editor = Editor()
    config_dir = tmp_path / "config"
    env = {"IAC_CODE_API_KEY": MODEL_KEY, "AWS_SECRET_ACCESS_KEY": CLOUD_SECRET}
    async with editing(editor, model.url, config_dir, **env) as conn:
        session_id = (await conn.new_session(cwd=str(secrets_workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("show me the settings")])
    assert len(editor.created) == 1, "the command ran in the editor's terminal"
    (tool_text,) = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "IAC_CODE_API_KEY=[redacted: IAC_CODE_API_KEY]" in tool_text and revealed(tool_text) == []
    (final,) = [u for u in editor.of_kind("tool_call_update") if u.status == "completed"]
    assert final.content == [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=tool_text))
    ]
    stored = b"".join(path.read_bytes() for path in config_dir.rglob("*") if path.is_file())
    assert revealed(stored.decode(errors="replace")) == []
