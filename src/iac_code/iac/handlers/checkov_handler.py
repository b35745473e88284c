"""checkov inside a warm worker: imported once (seconds), then each request scans its units.

Terraform is scanned one directory at a time (checkov builds a graph of a directory's resources);
CloudFormation, Kubernetes and Dockerfiles file by file in one run per framework; a Helm chart as a
whole (checkov renders it with the `helm` binary). Standard library and checkov only: this file runs in
the worker process, possibly under checkov's own interpreter.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from checkov.cloudformation.runner import Runner as CloudFormationRunner
from checkov.common.output.report import Report
from checkov.dockerfile.runner import Runner as DockerfileRunner
from checkov.helm.runner import Runner as HelmRunner
from checkov.kubernetes.runner import Runner as KubernetesRunner
from checkov.runner_filter import RunnerFilter
from checkov.terraform.runner import Runner as TerraformRunner

FILE_RUNNERS: dict[str, Any] = {
    "cloudformation": CloudFormationRunner,
    "kubernetes": KubernetesRunner,
    "dockerfile": DockerfileRunner,
}
SERIOUS = frozenset({"CRITICAL", "HIGH"})


def handle(request: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {unit["rel"]: [] for unit in request["units"]}
    by_framework: dict[str, list[dict[str, Any]]] = {}
    for unit in request["units"]:
        by_framework.setdefault(unit["framework"], []).append(unit)
    for framework, units in by_framework.items():
        if framework in FILE_RUNNERS:
            files = {os.path.abspath(path): (unit["rel"], rel) for unit in units for path, rel in unit["files"]}
            reports = FILE_RUNNERS[framework]().run(None, files=list(files), runner_filter=_filter(framework))
            _collect(reports, files.get, results)
        else:
            for unit in units:
                _scan_directory(framework, unit, results)
    return {"results": results}


def _scan_directory(framework: str, unit: dict[str, Any], results: dict[str, list[dict[str, Any]]]) -> None:
    files = {os.path.abspath(path): rel for path, rel in unit["files"]}
    if framework == "terraform":
        tf_files = [path for path in files if path.endswith((".tf", ".tf.json"))]
        if not tf_files:
            return
        reports = TerraformRunner().run(None, files=tf_files, runner_filter=_filter(framework))
    else:
        reports = HelmRunner().run(unit["path"], runner_filter=_filter(framework))

    def locate(path: str) -> tuple[str, str] | None:
        rel = files.get(path)
        if rel is not None:
            return unit["rel"], rel
        inside = os.path.relpath(path, unit["path"]) if os.path.isabs(path) else path.lstrip("/")
        if inside.startswith(".."):
            return None
        return unit["rel"], os.path.normpath(os.path.join(unit["rel"], inside))

    _collect(reports, locate, results)


def _collect(
    reports: Any, locate: Callable[[str], tuple[str, str] | None], results: dict[str, list[dict[str, Any]]]
) -> None:
    for report in reports if isinstance(reports, list) else [reports]:
        if not isinstance(report, Report):
            continue
        for record in report.failed_checks:
            where = locate(os.path.abspath(record.file_abs_path or record.file_path))
            if where is None:
                continue
            unit_rel, rel = where
            results[unit_rel].append(_finding(record, rel, record.file_abs_path or ""))


def _finding(record: Any, rel: str, absolute: str) -> dict[str, Any]:
    lines = record.file_line_range or []
    line = lines[0] if lines and isinstance(lines[0], int) and lines[0] >= 1 else None
    severity = getattr(record.severity, "name", None)
    # Dockerfile resources are named after the file's absolute path: show the workspace-relative one.
    resource = str(record.resource).replace(absolute, rel) if absolute else str(record.resource)
    return {
        "tool": "checkov",
        "rule": str(record.check_id),
        "severity": "error" if severity in SERIOUS else "warning",
        "file": rel,
        "line": line,
        "message": f"{record.check_name} ({resource})",
    }


def _filter(framework: str) -> RunnerFilter:
    return RunnerFilter(framework=[framework], show_progress_bar=False, download_external_modules=False)
