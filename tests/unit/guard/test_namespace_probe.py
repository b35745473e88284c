"""The namespace probe's child starts through system/processes: in a process group of its own, with the
scrubbed environment and the mount plan (a reporting program stands in for the reaper)."""

from __future__ import annotations

import sys

import pytest
from tests.child_report import OWN_GROUP, VARIABLE, report_of, reporting_program

from iac_code.guard.namespace import probe_namespaces
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

CREDENTIAL = "AWS_SECRET_ACCESS_KEY"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the probe runs on Linux only")
def test_the_probe_runs_in_its_own_group_with_the_plan_and_without_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv(CREDENTIAL, "test-only-not-a-secret")
    reaper = reporting_program(tmp_path, "reaper")
    monkeypatch.setattr("iac_code.guard.namespace.contained", lambda *command: (str(reaper),))
    guard_directory = tmp_path / "guard"
    guard_directory.mkdir()
    support = probe_namespaces(guard_directory)
    assert not support.usable  # the stand-in covers nothing: the probe says so
    report = report_of(reaper)
    assert report[0] == OWN_GROUP
    assert f"{VARIABLE}{MOUNT_PLAN_VARIABLE}" in report
    assert f"{VARIABLE}{CREDENTIAL}" not in report
