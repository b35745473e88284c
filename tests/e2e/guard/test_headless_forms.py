"""Every form of the table through the real bash tool of `iac-code -p`: with `--yes`, no change runs; with
`--allow-infra-changes` too, each runs exactly once; what changes nothing runs either way.

One headless run per flag set, every row a tool call of the same turn (a process per row would cost a
minute); each row is still its own test, reading its own stand-ins' log."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.guard.conftest import skip_unless_guardable
from tests.e2e.guard.forms import FORMS, Form, agent_path, changes_logged, prepare
from tests.e2e.headless_turn import bash_results

FLAGS = {"denied": ["--yes"], "allowed": ["--yes", "--allow-infra-changes"]}


def row_line(form: Form, workspace: Path, bin_dir: Path) -> str:
    # each row's stand-ins log apart; a line of its own, so that the row's line is read as written
    return f'export STAND_IN_LOG="$PWD/{form.id}.log"\n{prepare(form, workspace, bin_dir)}'


@pytest.fixture(scope="module", params=list(FLAGS))
def headless_run(request, bin_dir, tmp_path_factory) -> tuple[str, Path, dict[str, str]]:
    """(which flags, the workspace, each row's tool result) of one run over every row."""
    workspace = tmp_path_factory.mktemp(f"headless-{request.param}")
    lines = [row_line(form, workspace, bin_dir) for form in FORMS]
    config = workspace.parent / f"config-{request.param}"
    results = bash_results(workspace, lines, FLAGS[request.param], config, agent_path(bin_dir))
    return request.param, workspace, {form.id: result for form, result in zip(FORMS, results, strict=True)}


@pytest.mark.parametrize("form", FORMS, ids=[form.id for form in FORMS])
def test_a_change_runs_only_when_allowed_and_then_once(headless_run, form, namespaces_here):
    skip_unless_guardable(form, namespaces_here)
    flags, workspace, results = headless_run
    log = workspace / f"{form.id}.log"
    if form.change is None:
        assert log.exists(), results[form.id]  # ran, unasked
        assert "Permission denied" not in results[form.id] and "refused" not in results[form.id]
    elif flags == "denied":
        assert changes_logged(log) == [], results[form.id]
    else:
        assert changes_logged(log) == [list(form.change)], results[form.id]
