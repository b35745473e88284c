"""The independent `acpx` ACP client from npm: installed once per checkout, run against `iac-code acp`.

acpx 0.19 needs Node >= 22.13; tests/e2e/npm.py installs it (and Node 22 where the machine's is
older) into `<repo>/.cache/acpx`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import npm
from tests.e2e.acp.wire import model_env

PREFIX = npm.CACHE / "acpx"
ACPX = npm.NpmPackage("acpx@0.19", bin="acpx", min_node=(22, 13))
RUN_TIMEOUT = 60

# Our agent, spelled as acpx's --agent wants it: one command line (acpx splits it like a shell).
AGENT_COMMAND = shlex.join([sys.executable, "-m", "iac_code.cli", "acp"])

Message = dict[str, Any]
Acpx = npm.NodeProgram
AcpxUnavailable = npm.NpmUnavailable  # no npm, or no Node 22 for this platform: a skip
InstallFailed = npm.InstallFailed  # npm ran and failed: reported, never skipped


def install(prefix: Path = PREFIX) -> Acpx:
    """acpx ready to run, installing it (and Node 22 when needed) unless a matching install exists."""
    return npm.install(ACPX, prefix)


@dataclass(frozen=True)
class Run:
    """One finished acpx invocation."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def messages(self) -> list[Message]:
        """stdout as NDJSON; any line that is not JSON fails the test that reads it."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def describe(self) -> str:
        return f"acpx exited {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class AcpxRunner:
    """acpx with our agent, one workspace and one HOME: `run(*args)` waits, `start(*args)` does not.

    acpx keeps its sessions and queue owners under `~/.acpx`, hence a HOME of its own."""

    def __init__(self, acpx: Acpx, model_url: str, root: Path) -> None:
        self.workspace = root / "work"
        self.workspace.mkdir()
        (root / "home").mkdir()
        self.env = model_env(model_url, root / "config", HOME=str(root / "home"))
        self._acpx = acpx

    def argv(self, *args: str) -> list[str]:
        return self._acpx.argv("--agent", AGENT_COMMAND, "--cwd", str(self.workspace), "--format", "json", *args)

    def run(self, *args: str, timeout: float = RUN_TIMEOUT) -> Run:
        done = subprocess.run(self.argv(*args), env=self.env, capture_output=True, text=True, timeout=timeout)
        return Run(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args), env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )


# -- reading acpx's JSON output: the ACP messages it exchanged with the agent, both directions --------


def requests(messages: list[Message], method: str) -> list[Message]:
    return [m for m in messages if m.get("method") == method and "id" in m]


def response_to(messages: list[Message], request: Message) -> Message:
    """The reply to `request`. Ids restart per direction, so the reply is the first match after it."""
    start = messages.index(request) + 1
    return next(m for m in messages[start:] if m.get("id") == request["id"] and "method" not in m)


def only_request(messages: list[Message], method: str) -> Message:
    (request,) = requests(messages, method)
    return request
