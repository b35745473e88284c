"""The iac layer's children start through system/processes: in a process group of their own, with the
scrubbed environment (no cloud credential, none of the agent's keys). A reporting program stands in for
ripgrep, a checker's CLI and checkov's interpreter; what it reports comes back through the real code."""

from __future__ import annotations

import pytest
from tests.child_report import OWN_GROUP, VARIABLE, reporting_program

from iac_code.iac.checkers.external import program_version
from iac_code.iac.checkers.warm import WorkerChecker
from iac_code.iac.walk import walk_candidates

CREDENTIAL = "AWS_SECRET_ACCESS_KEY"
AGENT_KEY = "OPENAI_API_KEY"


@pytest.fixture
def agent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cloud credential and one of the agent's keys, as a library user's process may still hold them."""
    monkeypatch.setenv(CREDENTIAL, "test-only-not-a-secret")
    monkeypatch.setenv(AGENT_KEY, "test-only-not-a-key")


def test_the_walks_ripgrep_runs_in_its_own_group_without_credentials(tmp_path, monkeypatch, agent_environment):
    ripgrep = reporting_program(tmp_path, "rg")
    monkeypatch.setattr("iac_code.iac.walk.find_ripgrep", lambda: str(ripgrep))
    listed = [path.name for path in walk_candidates(tmp_path).paths]  # each line rg prints is a file to it
    assert OWN_GROUP in listed
    assert f"{VARIABLE}PATH" in listed
    assert f"{VARIABLE}{CREDENTIAL}" not in listed
    assert f"{VARIABLE}{AGENT_KEY}" not in listed


def test_a_checkers_version_probe_runs_in_its_own_group(tmp_path):
    assert program_version(str(reporting_program(tmp_path, "tflint")), "--version") == OWN_GROUP


def test_checkovs_package_probe_runs_in_its_own_group_without_credentials(tmp_path, agent_environment):
    interpreter = reporting_program(tmp_path, "python3")

    class Probed(WorkerChecker):
        package = "checkov"

        def python(self) -> str:
            return str(interpreter)

    said = Probed().version().splitlines()  # the probe's whole output is taken for the version
    assert said[0] == OWN_GROUP
    assert f"{VARIABLE}PATH" in said
    assert f"{VARIABLE}{CREDENTIAL}" not in said
    assert f"{VARIABLE}{AGENT_KEY}" not in said
