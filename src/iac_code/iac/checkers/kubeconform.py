"""kubeconform from PATH: Kubernetes manifests against the API schemas.

kubeconform fetches schemas from the network unless they are cached locally (`-schema-location`); when
none can be loaded the checker reports itself skipped rather than flagging every manifest. Its output has
no line numbers, so the line is found from the resource's kind/name and the path of the error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from yaml import YAMLError
from yaml.nodes import Node, SequenceNode

from iac_code.iac.checker import Selection, Tree, Unit
from iac_code.iac.checkers.external import ProgramChecker, run_program
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.safe_read import read_beneath
from iac_code.iac.snapshot import snapshot
from iac_code.iac.sources import MAX_FILE_BYTES
from iac_code.iac.yamlnodes import compose_documents, line_of, mapping_get, scalar

BATCH = 200
SCHEMA_TROUBLE = ("could not find schema", "failed downloading schema", "error while downloading schema")


class KubeconformChecker(ProgramChecker):
    name = "kubeconform"
    summary = "Kubernetes manifests against the API schemas: kubeconform (if on PATH)"
    timeout = 120.0
    programs = ("kubeconform",)
    version_args = ("-v",)

    def select(self, tree: Tree) -> Selection:
        return Selection(units=tree.file_units({FileKind.KUBERNETES}))

    async def check(self, tree: Tree, units: Sequence[Unit]) -> dict[str, list[Finding]]:
        program = self.program()
        results: dict[str, list[Finding]] = {}
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
                for finding in self._findings(tree, resource):
                    results.setdefault(finding.file, []).append(finding)
        if schema_errors and not results:
            raise RuntimeError(
                "no Kubernetes schemas could be loaded (offline? give kubeconform a local -schema-location)"
            )
        return results

    def _findings(self, tree: Tree, resource: dict[str, Any]) -> list[Finding]:
        status = resource.get("status")
        if status not in ("statusInvalid", "statusError"):
            return []
        rel = str(resource.get("filename", ""))
        kind, name = str(resource.get("kind", "")), str(resource.get("name", ""))
        errors = resource.get("validationErrors") or [{"path": "", "msg": resource.get("msg", "")}]
        text = _read(tree, rel)
        return [
            Finding(
                self.name,
                "invalid" if status == "statusInvalid" else "error",
                "error",
                rel,
                _line(text, kind, name, str(error.get("path", ""))),
                f"{kind} {name}: {error.get('path') or ''} {error.get('msg', '')}".replace("  ", " ").strip(),
            )
            for error in errors
        ]


def _read(tree: Tree, rel: str) -> str:
    """The manifest kubeconform named, read without following symlinks and within the size cap."""
    try:
        return read_beneath(tree.workspace, rel, MAX_FILE_BYTES).decode("utf-8", errors="replace")
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
