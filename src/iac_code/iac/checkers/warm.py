"""Checkers whose tool runs in a warm worker process (see iac_code.iac.workers): cfn-lint and checkov."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from iac_code.iac.checker import CheckerUnavailable, Selection, Tree, Unit, unsafe_exclusions
from iac_code.iac.checkers.yaml_screen import screen_yaml
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.limits import MB, Limits
from iac_code.iac.parse_workers import prewarm_parse_workers
from iac_code.iac.snapshot import snapshot
from iac_code.iac.sources import SourceFile
from iac_code.iac.workers import WarmWorker, WorkerError, ask, warm_worker
from iac_code.system.processes import command_environment, run

log = logging.getLogger(__name__)

HANDLERS = Path(__file__).resolve().parent.parent / "handlers"
# From the checkout: the iac-code on PyPI is another project.
CHECKOV_HINT = (
    "checkov is not installed: install iac-code with its checkov extra "
    "(from its checkout: pipx install --force '.[checkov]'), or pipx install checkov"
)
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
# Sequential parsing: checkov otherwise forks a pool of copies of the warm worker (hundreds of MB each) on
# every run, which cost 5x the scan itself on a 25-directory tree (and escaped the worker's own limits).
# checkov renders a chart with `helm template --dependency-update`, which downloads the dependencies a
# Chart.yaml names: an allow-list that matches no http(s) repository makes it skip such a chart instead.
CHECKOV_ENV = {
    "LOG_LEVEL": "ERROR",
    "BC_SKIP_MAPPING": "TRUE",
    "CHECKOV_PARALLELIZATION_TYPE": "none",
    "CHECKOV_HELM_ALLOWED_REMOTE_REPOS": "none://",
}
CHECKOV_TERRAFORM_FILES = (".tf", ".tf.json")  # what its Terraform runner parses (not .tfvars)
# Heap per worker: checking 300 files uses ~260 MB (checkov) and ~140 MB (cfn-lint); a graph of a big
# Terraform configuration or a large SAM template can take a few times that. Past 1 GB it is an attack
# (the alias bomb took checkov to 3.3 GB). CPU time per request: the checker's timeout.
WORKER_MEMORY = 1024 * MB
VERSION_PROBE_TIMEOUT = 30.0  # another interpreter's `importlib.metadata.version(...)`: its start, cold


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

    def given(self, unit: Unit) -> list[SourceFile]:
        """The files of `unit` the worker's tool reads (copied for it: see iac.snapshot)."""
        return list(unit.files)

    def payload(self, tree: Tree, unit: Unit, copies: Path) -> dict[str, Any]:
        """The unit as the worker sees it: the files it reads, as copied under `copies`, never more."""
        return {
            "rel": unit.rel,
            "path": str(copies / unit.rel),
            "files": [[str(copies / f.rel), f.rel] for f in self.given(unit)],
        }

    def limits(self) -> Limits:
        return Limits(memory_bytes=WORKER_MEMORY, cpu_seconds=int(self.timeout))

    def worker(self) -> WarmWorker:
        return warm_worker(self.name, HANDLERS / self.handler, self.python(), self.env, self.limits())

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        async with snapshot(f for unit in units for f in self.given(unit)) as copies:
            request = {"units": [self.payload(tree, unit, copies) for unit in units]}
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
        selection.excluded.extend(unsafe_exclusions({**tree.unsafe_terraform_dirs, **tree.unsafe_charts}))
        return screen_yaml(tree, selection)

    def given(self, unit: Unit) -> list[SourceFile]:
        """A Terraform directory's .tf files only; nothing for a chart, which `helm` renders from its own
        directory (checked for files no program may be handed: Tree.helm_charts)."""
        if not unit.is_dir:
            return list(unit.files)
        if _is_chart(unit):
            return []
        return [f for f in unit.files if f.rel.endswith(CHECKOV_TERRAFORM_FILES)]

    def payload(self, tree: Tree, unit: Unit, copies: Path) -> dict[str, Any]:
        if not unit.is_dir:
            framework = CHECKOV_FRAMEWORKS[unit.files[0].kind]
        elif _is_chart(unit):
            chart = {"rel": unit.rel, "path": str(tree.absolute(unit.rel)), "files": []}
            return {**chart, "framework": "helm"}
        else:
            framework = "terraform"
        return {**super().payload(tree, unit, copies), "framework": framework}


def _is_chart(unit: Unit) -> bool:
    return any(f.kind is FileKind.HELM_CHART for f in unit.files)


def prewarm_workers(checkers: Sequence[WorkerChecker] = (CheckovChecker(), CfnLintChecker())) -> threading.Thread:
    """Start the checkers' workers in the background (e.g. when a session opens on a workspace that has
    infrastructure), so the first iac_check does not wait seconds for checkov's import. They start side by
    side, the parse workers (quick, and every check uses them) with the heavy ones: one after the other,
    checkov's import began only once cfn-lint had loaded its rules. The thread returned ends when all are
    ready."""

    def start(checker: WorkerChecker) -> None:
        try:
            checker.worker().start(checker.timeout)
        except (CheckerUnavailable, WorkerError) as exc:
            log.info("not prewarming %s: %s", checker.name, exc)

    def start_all() -> None:
        threads = [
            threading.Thread(target=start, args=(c,), name=f"iac-prewarm-{c.name}", daemon=True) for c in checkers
        ]
        threads.append(threading.Thread(target=prewarm_parse_workers, name="iac-prewarm-parsers", daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    thread = threading.Thread(target=start_all, name="iac-prewarm", daemon=True)
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
        # Unguarded: the probe only reads the package's metadata, it starts no program.
        done = run([python, "-c", probe], env=command_environment(guarded=False), timeout=VERSION_PROBE_TIMEOUT)
    except OSError:  # TimeoutError among them
        raise CheckerUnavailable(CHECKOV_HINT) from None
    if done.code != 0:
        raise CheckerUnavailable(CHECKOV_HINT)
    return done.stdout.decode(errors="replace").strip()
