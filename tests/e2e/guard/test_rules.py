"""A deny rule holds for what a script runs: the guard's shim asks about `kubectl delete`, the rule refuses it,
even with --yes --allow-infra-changes (the stand-in never runs)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.guard.forms import agent_path, changes_logged
from tests.e2e.headless_turn import bash_results

SCRIPT = "#!/bin/sh\nkubectl get pods\nkubectl delete namespace prod\n"


def test_a_deny_rule_refuses_a_change_a_script_makes(bin_dir: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    rules = workspace / ".iac-code" / "settings.json"
    rules.parent.mkdir()
    rules.write_text(json.dumps({"permissions": {"deny": ["Bash(kubectl delete *)"]}}))
    script = workspace / "deploy.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    line = 'export STAND_IN_LOG="$PWD/run.log"\n./deploy.sh'
    flags = ["--yes", "--allow-infra-changes"]
    (result,) = bash_results(workspace, [line], flags, tmp_path / "config", agent_path(bin_dir))
    assert (workspace / "run.log").read_text().split("\n")[0] == "kubectl get pods", result  # the script ran
    assert changes_logged(workspace / "run.log") == [], result
    assert "kubectl delete namespace prod" not in (workspace / "run.log").read_text()
