"""`iac-code -p` with a trusted and an untrusted MCP server in config.json: what runs with no one to ask,
under each of the permission flags, and the hint a denied tool leaves on stderr."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.e2e.acp.wire import model_env
from tests.e2e.mcp.through_agent import call
from tests.e2e.mcp.trust_table import TABLE, ran, tool_name, write_config

pytestmark = pytest.mark.timeout(120)

ALLOWED = [("untrusted", "read_state"), ("trusted", "annotate"), ("untrusted", "terraform_apply")]
ALLOW_TOOLS = ["--allow-tools", ",".join(tool_name(*row) for row in ALLOWED)]
INFRA = {row for row, cells in TABLE.items() if cells[0] == "ask*"}
TRUSTED_READS = {("trusted", "read_state"), ("trusted", "kubectl_delete")}


@pytest.mark.parametrize(
    ("flags", "runs"),
    [
        ([], TRUSTED_READS | {("untrusted", "read_state")}),  # default mode: an untrusted read-only claim runs
        (["--yes"], TRUSTED_READS),  # --yes covers neither MCP tools that may act outside nor changes
        (["--yes", *ALLOW_TOOLS], TRUSTED_READS | set(ALLOWED[:2])),  # --allow-tools: not for a change
        (["--yes", "--allow-infra-changes"], TRUSTED_READS | INFRA),
    ],
    ids=["no-flags", "yes", "yes-allow-tools", "yes-allow-infra-changes"],
)
def test_what_runs_with_no_one_to_ask(model, tmp_path, flags, runs):
    workspace, config, calls = tmp_path / "work", tmp_path / "config", tmp_path / "calls"
    workspace.mkdir()
    write_config(config, calls)
    rows = list(TABLE)
    model.add(*(call(tool_name(*row)) for row in rows), {"text": "done"})
    result = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "-p", "every tool", *flags],
        cwd=workspace,
        env=model_env(model.url, config),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 0, result.stderr
    assert ran(calls) == [row for row in rows if row in runs]
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    for row, text in zip(rows, results, strict=True):
        name = tool_name(*row)
        if row in runs:
            assert text == f"{row[0]} {row[1]} ran"
        elif row in INFRA:
            assert text == "Permission denied."
            assert f"denied {name} (an infrastructure change: allow those with --allow-infra-changes)" in result.stderr
        else:  # only --allow-tools covers an MCP tool that may act outside the workspace
            assert text == "Permission denied."
            assert f"denied {name} (allow it with --allow-tools {name})" in result.stderr
