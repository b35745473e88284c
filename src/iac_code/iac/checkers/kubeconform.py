"""kubeconform from PATH: Kubernetes manifests against the API schemas.

kubeconform fetches schemas from the network unless they are cached locally (`-schema-location`); when
none can be loaded the checker reports itself skipped rather than flagging every manifest. Its output has
no line numbers, so the line is found from the resource's kind/name and the path of the error, by parsing
the manifest again: in a parse worker (`find_lines`), like every parse of the workspace's files.
Manifests whose YAML aliases expand past the loader's bound are not handed to kubeconform (yaml_screen).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yaml import YAMLError
from yaml.nodes import Node, SequenceNode

from iac_code.iac.checker import Selection, Tree, Unit
from iac_code.iac.checkers.external import ProgramChecker, run_program
from iac_code.iac.checkers.yaml_screen import screen_yaml
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.limits import LimitExceeded
from iac_code.iac.parse_workers import call_in_worker
from iac_code.iac.snapshot import snapshot
from iac_code.iac.sources import read_text
from iac_code.iac.workers import WorkerError
from iac_code.iac.yamlnodes import compose_documents, line_of, mapping_get, scalar

log = logging.getLogger(__name__)

BATCH = 200
SCHEMA_TROUBLE = ("could not find schema", "failed downloading schema", "error while downloading schema")


class KubeconformChecker(ProgramChecker):
    name = "kubeconform"
    summary = "Kubernetes manifests against the API schemas: kubeconform (if on PATH)"
    timeout = 120.0
    programs = ("kubeconform",)
    version_args = ("-v",)

    def select(self, tree: Tree) -> Selection:
        return screen_yaml(tree, Selection(units=tree.file_units({FileKind.KUBERNETES})))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        program = self.program()
        problems: list[_Problem] = []
        schema_errors = 0
        for start in range(0, len(units), BATCH):
            batch = units[start : start + BATCH]
            # kubeconform is given copies of the files as we read them (see iac.snapshot), not their paths
            async with snapshot(f for unit in batch for f in unit.files) as copies:
                argv = [program, "-output", "json", "-summary", *(u.rel for u in batch)]
                run = await run_program(argv, copies, self.timeout)
            try:
                report = json.loads(run.stdout)
            except json.JSONDecodeError:
                raise RuntimeError(f"kubeconform gave no JSON: {(run.stderr or run.stdout).strip()[:300]}") from None
            for resource in report.get("resources") or []:
                if any(s in str(resource.get("msg", "")) for s in SCHEMA_TROUBLE):
                    schema_errors += 1
                    continue
                problems.extend(_problems(resource))
        if schema_errors and not problems:
            raise RuntimeError(
                "no Kubernetes schemas could be loaded (offline? give kubeconform a local -schema-location)"
            )
        lines = await self._lines(tree, problems) if problems else []
        results: dict[str, list[Finding]] = {}
        for problem, line in zip(problems, lines, strict=True):
            results.setdefault(problem.rel, []).append(problem.finding(self.name, line))
        return results

    async def _lines(self, tree: Tree, problems: list[_Problem]) -> list[int | None]:
        targets = [[p.rel, p.kind, p.name, p.path] for p in problems]
        args = {"root": str(tree.workspace), "targets": targets}
        try:
            lines: list[int | None] = await call_in_worker(f"{__name__}:find_lines", args, self.timeout)
        except (WorkerError, LimitExceeded) as exc:
            log.info("kubeconform: no lines for its findings: %s", exc)
            return [None] * len(problems)  # the findings stand without their lines
        return lines


class _Problem:
    def __init__(self, resource: dict[str, Any], error: dict[str, Any]) -> None:
        self.invalid = resource.get("status") == "statusInvalid"
        self.rel = str(resource.get("filename", ""))
        self.kind, self.name = str(resource.get("kind", "")), str(resource.get("name", ""))
        self.path = str(error.get("path", ""))
        self.message = f"{self.kind} {self.name}: {error.get('path') or ''} {error.get('msg', '')}"

    def finding(self, tool: str, line: int | None) -> Finding:
        rule = "invalid" if self.invalid else "error"
        return Finding(tool, rule, "error", self.rel, line, self.message.replace("  ", " ").strip())


def _problems(resource: dict[str, Any]) -> list[_Problem]:
    if resource.get("status") not in ("statusInvalid", "statusError"):
        return []
    errors = resource.get("validationErrors") or [{"path": "", "msg": resource.get("msg", "")}]
    return [_Problem(resource, error) for error in errors]


def find_lines(root: str, targets: list[list[str]]) -> list[int | None]:
    """In a parse worker: for each [rel, kind, name, JSON pointer], the line it is at (None: not found)."""
    texts: dict[str, str] = {}
    lines = []
    for rel, kind, name, pointer in targets:
        if rel not in texts:
            texts[rel] = _read(Path(root), rel)
        lines.append(_line(texts[rel], kind, name, pointer))
    return lines


def _read(root: Path, rel: str) -> str:
    try:
        return read_text(root, rel)
    except OSError:
        return ""


def _line(text: str, kind: str, name: str, pointer: str) -> int | None:
    """The line of the resource `kind`/`name` in `text`, down the JSON pointer `pointer` as far as it goes."""
    try:
        documents = compose_documents(text)
    except YAMLError:
        return None
    for document in documents:
        if (
            scalar(mapping_get(document, "kind")) == kind
            and scalar(mapping_get(mapping_get(document, "metadata"), "name")) == name
        ):
            return line_of(_follow(document, [p for p in pointer.split("/") if p]))
    return None


def _follow(node: Node, steps: list[str]) -> Node:
    for step in steps:
        if isinstance(node, SequenceNode) and step.isdigit() and int(step) < len(node.value):
            node = node.value[int(step)]
            continue
        child = mapping_get(node, step)
        if child is None:
            break
        node = child
    return node
