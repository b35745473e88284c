"""The reaper's mount plan: the shim covers the listed binary for the command alone, the original stays
reachable under the plan's real root, and a plan that cannot be carried out stops the command (exit 126)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from iac_code.guard.namespace import mount_plan, probe_namespaces
from iac_code.system.processes import contained
from iac_code.system.reaper import GUARD_FAILED, MOUNT_PLAN_VARIABLE


def _namespaces_here() -> bool:
    with tempfile.TemporaryDirectory() as directory:
        return probe_namespaces(Path(directory)).usable


pytestmark = pytest.mark.skipif(not _namespaces_here(), reason="no mount namespaces here")


def _cat(paths: list[Path], plan: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    return subprocess.run(contained("cat", *map(str, paths)), env=env, capture_output=True, text=True, timeout=30)


def test_the_binary_is_covered_for_the_command_only(tmp_path):
    binary, shim, real = tmp_path / "binary", tmp_path / "shim", tmp_path / "real"
    binary.write_text("real binary\n")
    shim.write_text("shim\n")
    real.mkdir()
    done = _cat([binary, Path(f"{real}{binary}")], mount_plan(str(shim), str(real), [str(binary)]))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "shim\nreal binary\n"
    assert binary.read_text() == "real binary\n", "the agent's own view is untouched"


def test_the_plan_variable_is_not_passed_on(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "binary").write_text("")
    plan = mount_plan(str(tmp_path / "binary"), str(tmp_path / "real"), [str(tmp_path / "binary")])
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    done = subprocess.run(contained("env"), env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and MOUNT_PLAN_VARIABLE not in done.stdout


def test_a_plan_that_cannot_be_carried_out_stops_the_command(tmp_path):
    (tmp_path / "real").mkdir()
    marker = tmp_path / "ran"
    plan = mount_plan(str(tmp_path / "shim-that-is-not-there"), str(tmp_path / "real"), [str(tmp_path / "nothing")])
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    done = subprocess.run(contained("touch", str(marker)), env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == GUARD_FAILED
    assert "could not cover this command" in done.stderr
    assert not marker.exists()
