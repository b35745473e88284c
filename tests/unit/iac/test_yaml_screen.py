"""A YAML file our loader refuses for its aliases is never handed to cfn-lint, checkov or kubeconform:
their selection leaves it out with the reason, the rest is still checked."""

import asyncio
from collections import OrderedDict
from pathlib import Path

import pytest

from iac_code.iac.cache import ResultCache
from iac_code.iac.checker import Selection, Tree
from iac_code.iac.checkers import yaml_screen
from iac_code.iac.checkers.syntax import StructuredSyntaxChecker
from iac_code.iac.checkers.warm import CfnLintChecker
from iac_code.iac.engine import run_checks
from iac_code.iac.sources import load_sources
from iac_code.iac.walk import list_candidate_files
from iac_code.iac.workers import WorkerError

TEMPLATE = "AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Queue:\n    Type: AWS::SQS::Queue\n"
BOMB = (
    TEMPLATE
    + "Metadata:\n"
    + "".join(f"  a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10) if n else 'x'}]\n" for n in range(10))
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "queue.yaml").write_text(TEMPLATE)
    (tmp_path / "bomb.yaml").write_text(BOMB)
    return tmp_path


def test_cfn_lint_checks_the_template_and_leaves_the_bomb_out_with_the_reason(workspace: Path) -> None:
    checkers = {"yaml-syntax": StructuredSyntaxChecker(), "cfn-lint": CfnLintChecker()}
    report = asyncio.run(run_checks(workspace, workspace, checkers, ResultCache(None)))
    assert report.ran == ["yaml-syntax", "cfn-lint"]
    (skipped,) = report.skipped
    assert skipped.tool == "cfn-lint"
    assert skipped.reason == "YAML aliases expand to more than 100,000 nodes (not handed to the tool): bomb.yaml"
    assert [(f.tool, f.rule, f.file) for f in report.findings] == [("yaml-syntax", "yaml-aliases", "bomb.yaml")]


def test_a_file_no_worker_could_judge_is_not_handed_over(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args: object) -> object:
        raise WorkerError("parse worker 1 timed out")

    monkeypatch.setattr(yaml_screen, "call_in_worker_blocking", failing)
    monkeypatch.setattr(yaml_screen, "_verdicts", OrderedDict())  # nothing judged yet
    tree = Tree(workspace, load_sources(workspace, list_candidate_files(workspace)))
    selection = yaml_screen.screen_yaml(tree, Selection(units=tree.file_units({s.kind for s in tree.sources})))
    assert [u.rel for u in selection.units] == ["queue.yaml"]  # no anchor: needs no worker
    assert selection.excluded == [
        ("bomb.yaml", f"{yaml_screen.FAILED} (parse worker 1 timed out) (not handed to the tool)")
    ]
