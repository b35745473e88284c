"""check_startable: the errors exec would raise, found before the server's supervisor starts (under it, a
failed exec is only an exit code 127)."""

from __future__ import annotations

import os

import pytest

from iac_code.mcp.stdio import check_startable


def _program(path, mode: int = 0o755):
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_a_bare_name_is_searched_on_the_servers_path_not_the_agents(tmp_path):
    _program(tmp_path / "mcp-tool")
    check_startable("mcp-tool", tmp_path, {"PATH": f"/nonexistent:{tmp_path}"})
    with pytest.raises(FileNotFoundError):
        check_startable("mcp-tool", tmp_path, {"PATH": os.defpath})


def test_a_relative_path_is_the_server_cwds(tmp_path):
    _program(tmp_path / "server.sh")
    check_startable("./server.sh", tmp_path, {})
    check_startable(str(tmp_path / "server.sh"), tmp_path / "elsewhere", {})
    with pytest.raises(FileNotFoundError):
        check_startable("./server.sh", tmp_path / "elsewhere", {})


@pytest.mark.parametrize("name", ["not-executable", "a-directory"])
def test_what_cannot_be_executed_is_a_permission_error(tmp_path, name):
    if name == "a-directory":
        (tmp_path / name).mkdir()
    else:
        _program(tmp_path / name, 0o644)
    with pytest.raises(PermissionError):
        check_startable(f"./{name}", tmp_path, {})
