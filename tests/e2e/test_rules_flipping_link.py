"""Read and Write rules hold against a symbolic link flipped while the calls run (issue 37): a real `iac-code -p`
reads, greps and writes `link` many times, while a thread of the test flips it between a public file and a file
`Read(secrets/**)` / `Write(secrets/**)` deny. The loop resolves each call's path once, the rules judge that
path, and the tool opens that path without following links: not one read or search returns the denied file,
and not one write reaches it. (Before, the rules judged one resolution and the tool opened another: 6 leaks in 25.)"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.e2e.acp.test_rules import project_rules
from tests.e2e.acp.wire import model_env
from tests.fakes.openai_server import ScriptedOpenAI

TRIES = 60
SECRET = "TOPSECRET-do-not-leak"


def calls(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": {"path": "link", **arguments}} for _ in range(TRIES)]}


def flipping(workspace: Path, stop: threading.Event) -> None:
    """Points `link` at public.txt, then at secrets/key.txt, over and over, each time atomically (rename)."""
    targets = ("public.txt", "secrets/key.txt")
    turn = 0
    while not stop.is_set():
        temporary = workspace / f".link.{turn % 2}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(targets[turn % 2])
        os.replace(temporary, workspace / "link")
        turn += 1


def tool_results(model: ScriptedOpenAI) -> list[str]:
    messages = model.requests[-1]["messages"]
    return [str(m["content"]) for m in messages if m.get("role") == "tool"]


def run_with_flipping_link(workspace: Path, model: ScriptedOpenAI) -> subprocess.CompletedProcess[str]:
    stop = threading.Event()
    flipper = threading.Thread(target=flipping, args=(workspace, stop), daemon=True)
    flipper.start()
    try:
        return subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "-p", "go", "--yes"],
            cwd=workspace,
            env=model_env(model.url, workspace.parent / "config"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        stop.set()
        flipper.join()


def prepared(workspace: Path) -> Path:
    (workspace / "secrets").mkdir()
    secret = workspace / "secrets" / "key.txt"
    secret.write_text(SECRET + "\n")
    (workspace / "public.txt").write_text("public\n")
    (workspace / "link").symlink_to("public.txt")
    project_rules(workspace, {"deny": ["Read(secrets/**)", "Write(secrets/**)"]})
    return secret


def test_no_read_of_a_flipping_link_returns_the_denied_file(workspace: Path) -> None:
    prepared(workspace)
    with ScriptedOpenAI([calls("read_file"), {"text": "done"}]) as model:
        result = run_with_flipping_link(workspace, model)
    assert result.returncode == 0, result.stderr
    results = tool_results(model)
    assert len(results) == TRIES
    leaked = [text for text in results if SECRET in text]
    assert leaked == [], f"{len(leaked)} of {TRIES} reads returned the denied file"
    assert any("public" in text for text in results)


def test_no_grep_of_a_flipping_link_returns_the_denied_file(workspace: Path) -> None:
    prepared(workspace)
    with ScriptedOpenAI([calls("grep", pattern="."), {"text": "done"}]) as model:
        result = run_with_flipping_link(workspace, model)
    assert result.returncode == 0, result.stderr
    results = tool_results(model)
    assert len(results) == TRIES
    leaked = [text for text in results if SECRET in text]
    assert leaked == [], f"{len(leaked)} of {TRIES} searches returned the denied file"
    assert any(text.startswith("public.txt:1:public") for text in results)


def test_no_write_through_a_flipping_link_reaches_the_denied_file(workspace: Path) -> None:
    secret = prepared(workspace)
    with ScriptedOpenAI([calls("write_file", content="overwritten\n"), {"text": "done"}]) as model:
        result = run_with_flipping_link(workspace, model)
    assert result.returncode == 0, result.stderr
    assert len(tool_results(model)) == TRIES
    assert secret.read_text() == SECRET + "\n"
