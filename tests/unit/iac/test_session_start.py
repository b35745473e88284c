"""At a session's start: the summary is found in the background, and prewarms the heavy checkers only for
a workspace with infrastructure and an agent that asked for it."""

import threading
from pathlib import Path
from typing import Any

import pytest

from iac_code.iac import session_start, summary
from iac_code.iac.session_start import start_workspace_summary


@pytest.fixture
def prewarmed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []
    monkeypatch.setattr(session_start, "prewarm_workers", lambda: calls.append(True))
    return calls


@pytest.mark.parametrize("prewarm", [True, False])
def test_a_workspace_with_infrastructure(tmp_path: Path, prewarmed: list[bool], prewarm: bool) -> None:
    (tmp_path / "main.tf").write_text('terraform {\n  backend "s3" {}\n}\n')
    summary = start_workspace_summary(tmp_path, prewarm=prewarm).result(timeout=30)
    assert "Terraform root modules" in summary and "backend s3" in summary
    assert prewarmed == ([True] if prewarm else [])


def test_a_workspace_without_infrastructure(tmp_path: Path, prewarmed: list[bool]) -> None:
    (tmp_path / "notes.md").write_text("nothing to deploy\n")
    assert start_workspace_summary(tmp_path, prewarm=True).result(timeout=30) == ""
    assert prewarmed == []


def test_a_missing_workspace_gives_no_summary(tmp_path: Path, prewarmed: list[bool]) -> None:
    assert start_workspace_summary(tmp_path / "gone", prewarm=True).result(timeout=30) == ""
    assert prewarmed == []


def test_the_workers_start_while_the_summary_is_still_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """checkov's import takes seconds: it must overlap the summary (and the model's first turn), not follow it."""
    prewarm_started = threading.Event()
    monkeypatch.setattr(session_start, "prewarm_workers", prewarm_started.set)
    seen_while_rendering: list[bool] = []
    render = summary._render

    def slow_render(sections: Any, max_chars: int) -> str:
        seen_while_rendering.append(prewarm_started.wait(timeout=5))
        return render(sections, max_chars)

    monkeypatch.setattr(summary, "_render", slow_render)
    (tmp_path / "main.tf").write_text('terraform {\n  backend "s3" {}\n}\n')
    assert "backend s3" in start_workspace_summary(tmp_path, prewarm=True).result(timeout=30)
    assert seen_while_rendering == [True]
