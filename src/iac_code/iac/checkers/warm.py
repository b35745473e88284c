"""Checkers whose tool runs in a warm worker process (see iac_code.iac.workers): cfn-lint and checkov."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from iac_code.iac.checker import CheckerUnavailable, Selection, Tree, Unit
from iac_code.iac.checkers.yaml_screen import screen_yaml
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.limits import MB, Limits
from iac_code.iac.parse_workers import prewarm_parse_workers
from iac_code.iac.workers import WarmWorker, WorkerError, ask, warm_worker

log = logging.getLogger(__name__)

HANDLERS = Path(__file__).resolve().parent.parent / "handlers"
CHECKOV_HINT = "checkov is not installed: pip install 'iac-code[checkov]' (or pipx install checkov)"
CHECKOV_FRAMEWORKS = {
    FileKind.CLOUDFORMATION: "cloudformation",
    FileKind.KUBERNETES: "kubernetes",
    FileKind.DOCKERFILE: "dockerfile",
}
# checkov rates severities only with a platform API key; without one, these checks (resources open to the
# whole internet, privileged or host-sharing pods) are errors and the rest warnings.
CHECKOV_SERIOUS = frozenset(
    {
        "CKV_AWS_24",  # security group: SSH (22) open to 0.0.0.0/0
        "CKV_AWS_25",  # security group: RDP (3389) open to 0.0.0.0/0
        "CKV_AWS_260",  # security group: HTTP (80) open to 0.0.0.0/0
        "CKV_AWS_20",  # S3 bucket readable by everyone
        "CKV_AWS_57",  # S3 bucket writable by everyone
        "CKV_AWS_17",  # RDS instance publicly accessible
        "CKV_K8S_16",  # privileged container
        "CKV_K8S_17",  # host PID namespace
        "CKV_K8S_18",  # host IPC namespace
        "CKV_K8S_19",  # host network
        "CKV_ALI_1",  # Alibaba Cloud OSS bucket public
        "CKV_ALI_2",  # Alibaba Cloud security group: SSH (22) open to 0.0.0.0/0
        "CKV_ALI_3",  # Alibaba Cloud security group: RDP (3389) open to 0.0.0.0/0
        "CKV_ALI_9",  # Alibaba Cloud RDS instance public
    }
)
SEVERITY_REVISION = "1"  # bump when CHECKOV_SERIOUS changes: it is part of the cache key
# checkov talks to no platform without an API key; these keep it from trying anything else on the way.
CHECKOV_ENV = {"LOG_LEVEL": "ERROR", "BC_SKIP_MAPPING": "TRUE"}
# Heap per worker: checking 300 files uses ~260 MB (checkov) and ~140 MB (cfn-lint); a graph of a big
# Terraform configuration or a large SAM template can take a few times that. Past 1 GB it is an attack
# (the alias bomb took checkov to 3.3 GB). CPU time per request: the checker's timeout.
WORKER_MEMORY = 1024 * MB


class WorkerChecker:
    """A checker answered by a warm worker running `handler`; subclasses choose units and the interpreter."""

    name = ""
    summary = ""
    timeout = 120.0
    handler = ""
    package = ""
    env: dict[str, str] = {}

    def python(self) -> str:
        """The interpreter that has the tool (raises CheckerUnavailable)."""
        return sys.executable

    def version(self) -> str:
        return _package_version(self.python(), self.package)

    def select(self, tree: Tree) -> Selection:
        raise NotImplementedError

    def payload(self, tree: Tree, unit: Unit) -> dict[str, Any]:
        return {
            "rel": unit.rel,
            "path": str(tree.absolute(unit.rel)),
            "files": [[str(f.path), f.rel] for f in unit.files],
        }

    def limits(self) -> Limits:
        return Limits(memory_bytes=WORKER_MEMORY, cpu_seconds=int(self.timeout))

    def worker(self) -> WarmWorker:
        return warm_worker(self.name, HANDLERS / self.handler, self.python(), self.env, self.limits())

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        request = {"units": [self.payload(tree, unit) for unit in units]}
        try:
            answer = await ask(self.worker(), request, self.timeout)
        except WorkerError as exc:
            raise RuntimeError(str(exc)) from None
        results: dict[str, Any] = answer["results"]
        return {rel: [Finding.from_dict(item) for item in items] for rel, items in results.items()}


class CfnLintChecker(WorkerChecker):
    name = "cfn-lint"
    summary = "CloudFormation templates: cfn-lint (schemas, property names, references)"
    timeout = 120.0
    handler = "cfnlint_handler.py"
    package = "cfn-lint"

    def select(self, tree: Tree) -> Selection:
        return screen_yaml(tree, Selection(units=tree.file_units({FileKind.CLOUDFORMATION})))


class CheckovChecker(WorkerChecker):
    name = "checkov"
    summary = "security and misconfiguration: checkov on Terraform, CloudFormation, Kubernetes, Helm, Dockerfiles"
    timeout = 300.0
    handler = "checkov_handler.py"
    package = "checkov"
    env = CHECKOV_ENV

    def python(self) -> str:
        return checkov_python()

    def version(self) -> str:
        return f"{super().version()}+{SEVERITY_REVISION}"

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        results = await super().check(tree, units)
        return {rel: [_rated(f) for f in findings] for rel, findings in results.items()}

    def select(self, tree: Tree) -> Selection:
        selection = Selection(units=tree.file_units(CHECKOV_FRAMEWORKS) + tree.terraform_dirs())
        charts = tree.helm_charts()
        if charts and shutil.which("helm") is None:
            selection.excluded.extend((chart.rel, "Helm charts need `helm` on PATH") for chart in charts)
        else:
            selection.units.extend(charts)
        return screen_yaml(tree, selection)

    def payload(self, tree: Tree, unit: Unit) -> dict[str, Any]:
        if unit.is_dir:
            framework = "helm" if any(f.kind is FileKind.HELM_CHART for f in unit.files) else "terraform"
        else:
            framework = CHECKOV_FRAMEWORKS[unit.files[0].kind]
        return {**super().payload(tree, unit), "framework": framework}


def prewarm_workers(checkers: Sequence[WorkerChecker] = (CfnLintChecker(), CheckovChecker())) -> threading.Thread:
    """Start the checkers' workers in the background (e.g. when a session opens on a workspace that has
    infrastructure), so the first iac_check does not wait seconds for checkov's import: the parse
    workers first (they are quick to start and every check uses them), then the heavy ones."""

    def start() -> None:
        prewarm_parse_workers()
        for checker in checkers:
            try:
                checker.worker().start(checker.timeout)
            except (CheckerUnavailable, WorkerError) as exc:
                log.info("not prewarming %s: %s", checker.name, exc)

    thread = threading.Thread(target=start, name="iac-prewarm", daemon=True)
    thread.start()
    return thread


def _rated(finding: Finding) -> Finding:
    return replace(finding, severity="error") if finding.rule in CHECKOV_SERIOUS else finding


def checkov_python() -> str:
    """Our interpreter if it can import checkov, else the interpreter of a `checkov` on PATH (pipx, brew)."""
    if importlib.util.find_spec("checkov") is not None:
        return sys.executable
    script = shutil.which("checkov")
    interpreter = _script_interpreter(script) if script else None
    if interpreter is None:
        raise CheckerUnavailable(CHECKOV_HINT)
    return interpreter


def _script_interpreter(script: str) -> str | None:
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    if not first.startswith("#!") or "python" not in first:
        return None
    interpreter = first[2:].split()[0]
    return interpreter if Path(interpreter).is_file() else None


@cache
def _package_version(python: str, package: str) -> str:
    if python == sys.executable:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            raise CheckerUnavailable(f"the Python package {package} is not installed") from None
    probe = f"import importlib.metadata as m; print(m.version({package!r}))"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        raise CheckerUnavailable(CHECKOV_HINT) from None
    return done.stdout.strip()
