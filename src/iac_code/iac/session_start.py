"""What a session's start asks of iac: the workspace's infrastructure summary for the system prompt, and,
for a long-lived agent, warm checkers once the summary shows there is infrastructure to check.

Both happen in a background thread: opening a session never waits for the walk (a few milliseconds in a
repository, but most of a second in a home directory); the first model call does, when it comes first.
The workers start as soon as the walk has classified the files, while the summary is still being written:
checkov's import (seconds) overlaps the summary and the model's first turn.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from pathlib import Path

from iac_code.iac.checkers.warm import prewarm_workers
from iac_code.iac.summary import summarize_workspace

log = logging.getLogger(__name__)


def start_workspace_summary(workspace: Path, *, prewarm: bool = False) -> Future[str]:
    """summarize_workspace(workspace), computed in a daemon thread ("" when there is no infrastructure or
    the walk fails). With `prewarm`, a workspace that has infrastructure also starts the checkov and
    cfn-lint workers as soon as its files are classified, so the first iac_check does not wait seconds for
    their imports."""
    summary: Future[str] = Future()
    summary.set_running_or_notify_cancel()  # running from now: nobody can cancel it

    def work() -> None:
        text = ""
        try:
            # prewarm_workers starts its own thread and returns
            text = summarize_workspace(workspace, on_infrastructure=prewarm_workers if prewarm else None)
        except Exception:  # summarize_workspace already turns a failed walk into "": this is a bug
            log.exception("summarizing %s failed", workspace)
        finally:
            summary.set_result(text)

    threading.Thread(target=work, name="iac-summary", daemon=True).start()
    return summary
