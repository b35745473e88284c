"""The agent's own state is out of the file tools' reach (issue 37, part 2), on a real `iac-code acp` whose
session is opened in a home directory that holds its config dir: read_file of the database (by its path, by
an absolute path, through a link) is refused before anything opens it, so the server keeps its SQLite locks.
The proof is the attack itself: after the read attempts the operator runs `iac-code audit` (which opens and
closes the database, and would delete a WAL whose locks were dropped), the session writes on, the server is
killed with SIGKILL, and what it wrote is in the database. (Before: the read opened and closed iac-code.db in
the server process, the audit deleted the live WAL, and the later messages were lost.)"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import AgentProcess, model_env, updates
from tests.fakes.openai_server import ScriptedOpenAI

MARKER = "written-after-the-read-attempts"


def read_file(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}


def stored_bodies(database: Path) -> str:
    with sqlite3.connect(database) as connection:
        return "\n".join(body for (body,) in connection.execute("SELECT body FROM iac_messages"))


def test_reading_the_database_is_refused_and_the_store_stays_durable(model: ScriptedOpenAI, tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / ".iac-code"
    home.mkdir()
    (home / "db-link").symlink_to(".iac-code/iac-code.db")
    env = model_env(model.url, config)
    agent = AgentProcess(env)
    try:
        agent.initialize()
        session_id = agent.new_session(home)
        database = config / "iac-code.db"
        attempts = [".iac-code/iac-code.db", str(database), "db-link", ".iac-code/iac-code.db-wal"]
        model.add(*(read_file(path) for path in attempts), {"text": "could not"})
        _, seen = agent.prompt(session_id, "read the store")
        done = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
        assert [u["status"] for u in done] == ["failed"] * len(attempts)
        assert all("iac-code's own state" in str(u.get("rawOutput") or u.get("content")) for u in done)

        audit = subprocess.run(
            [sys.executable, "-m", "iac_code.cli", "audit"], env=env, capture_output=True, text=True, timeout=60
        )
        assert audit.returncode == 0, audit.stderr
        model.add({"text": "noted"})
        response, _ = agent.prompt(session_id, f"remember {MARKER}")
        assert response["result"]["stopReason"] == "end_turn"
        assert (config / "iac-code.db-wal").exists(), "the live WAL was deleted"
    finally:
        os.kill(agent.proc.pid, signal.SIGKILL)
        agent.proc.wait()
    assert MARKER in stored_bodies(database)
