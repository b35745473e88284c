"""`iac-code -p` with MCP servers from config.json: the model calls them, permissions as for built-in
tools, nothing left running after the turn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.e2e.acp.wire import model_env
from tests.e2e.mcp.servers import fixture_server, marker, processes_with
from tests.e2e.mcp.through_agent import call

pytestmark = pytest.mark.timeout(120)


def test_headless_runs_with_the_settings_servers(model, tmp_path):
    workspace, config, word = tmp_path / "work", tmp_path / "config", marker()
    workspace.mkdir()
    config.mkdir()
    spec = fixture_server("infra", word)
    servers = {"infra": {"command": spec.command, "args": list(spec.args), "env": dict(spec.env)}, "bad": {}}
    (config / "config.json").write_text(json.dumps({"mcpServers": servers}))
    model.add(
        call("mcp__infra__describe_region", region="cn-shanghai"),  # read-only: runs
        call("mcp__infra__delete_bucket", bucket="logs"),  # asks: denied, nobody to ask
        {"text": "done"},
    )
    result = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "-p", "describe the region"],
        cwd=workspace,
        env=model_env(model.url, config),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert results == ["cn-shanghai: 3 zones", "Permission denied."]
    assert "denied mcp__infra__delete_bucket" in result.stderr
    assert "MCP server 'bad' is not usable" in result.stderr  # told, and the other server still worked
    assert processes_with(word) == []
