"""Which YAML files are not handed to the tools that load YAML themselves (cfn-lint, checkov, kubeconform).

Our loader refuses a file whose aliases expand past yamlnodes.MAX_ALIAS_NODES (the yaml-syntax check
reports it with its line); their loaders would expand it, and the 730-byte bomb that takes our loader a
millisecond took the checkov worker to 3.3 GB. So those checkers' select() passes its selection through
`screen_yaml`, which moves the units holding such a file to `excluded`, with the reason.

Only a file that defines an anchor can be a bomb, so the others are let through after a byte scan; those
that do are composed in a parse worker (`alias_verdicts`). The engine calls `screen_tree` before the
checkers' select() (which runs on a thread that must not wait for a worker), so select() only looks the
verdicts up. Verdicts are kept by content digest: a re-check of an unchanged tree reads nothing. A file a
worker could not judge is not handed over either, and judged again by the next check.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from pathlib import Path

from iac_code.iac.checker import Selection, Tree
from iac_code.iac.classify import STRUCTURED_KINDS
from iac_code.iac.limits import LimitExceeded
from iac_code.iac.parse_workers import call_in_worker, call_in_worker_blocking
from iac_code.iac.safe_read import read_beneath
from iac_code.iac.sources import MAX_FILE_BYTES, SourceFile, read_text
from iac_code.iac.workers import WorkerError
from iac_code.iac.yamlnodes import StructuredSyntaxError, parse_structured

# An anchor (`&name`) where YAML allows one: at a line's start, or after a space, `[`, `{` or `,`.
_ANCHOR = re.compile(rb"(?:^|[\s\[{,])&[^\s\[\]{},]", re.M)
SCREEN_TIMEOUT = 60.0
MEMO_SIZE = 50_000
FAILED = "could not be screened for YAML alias bombs"
ALIAS_VERDICTS = f"{__name__}:alias_verdicts"  # what a parse worker runs

_verdicts: OrderedDict[str, str] = OrderedDict()  # content digest -> reason ("" : fine)
_verdicts_lock = threading.Lock()


async def screen_tree(tree: Tree) -> None:
    """Judge the tree's YAML files not judged yet (and retry those a failed worker could not judge), in a
    parse worker without holding a thread: the checkers' select() then finds every verdict made."""
    sources = [s for s in tree.sources if _screened_kind(s)]
    with _verdicts_lock:
        unknown = [s for s in sources if _verdicts.get(s.digest, FAILED).startswith(FAILED)]
    if not unknown:
        return
    suspects = await asyncio.to_thread(_suspects, tree, unknown)
    if not suspects:
        return
    try:
        refused = await call_in_worker(ALIAS_VERDICTS, _arguments(tree, suspects), SCREEN_TIMEOUT)
    except (WorkerError, LimitExceeded) as exc:
        refused = exc
    _remember(_judged(suspects, refused))


def screen_yaml(tree: Tree, selection: Selection) -> Selection:
    """`selection` without the units that hold a YAML file the loader refuses for its aliases."""
    files = {s.rel: s for unit in selection.units for s in unit.files if _screened_kind(s)}
    verdicts = _verdicts_for(tree, list(files.values()))
    kept = Selection(excluded=list(selection.excluded))
    for unit in selection.units:
        reasons = [verdicts[s.digest] for s in unit.files if verdicts.get(s.digest)]
        if reasons:
            kept.excluded.append((unit.rel, f"{reasons[0]} (not handed to the tool)"))
        else:
            kept.units.append(unit)
    return kept


def alias_verdicts(root: str, files: list[str]) -> dict[str, str]:
    """In a parse worker: the files of `files` whose aliases the loader refuses, with its message."""
    refused = {}
    for rel in files:
        try:
            parse_structured(rel, read_text(Path(root), rel))
        except StructuredSyntaxError as exc:
            if exc.rule == "yaml-aliases":
                refused[rel] = exc.message
        except OSError:
            continue  # the tools get nothing they could read either
    return refused


def _screened_kind(source: SourceFile) -> bool:
    return source.kind in STRUCTURED_KINDS and not source.rel.lower().endswith(".json")


def _verdicts_for(tree: Tree, sources: list[SourceFile]) -> dict[str, str]:
    """The verdicts on `sources`: those screen_tree made, the others made now (blocking: a select() called
    without the engine's screen_tree first, or a Helm chart's files beyond the tree)."""
    with _verdicts_lock:
        known = {s.digest: _verdicts[s.digest] for s in sources if s.digest in _verdicts}
    unknown = [s for s in sources if s.digest not in known]
    if not unknown:
        return known
    suspects = _suspects(tree, unknown)
    refused: dict[str, str] | Exception = {}
    if suspects:
        try:
            refused = call_in_worker_blocking(ALIAS_VERDICTS, _arguments(tree, suspects), SCREEN_TIMEOUT)
        except (WorkerError, LimitExceeded) as exc:
            refused = exc
    return {**known, **_remember(_judged(suspects, refused))}


def _arguments(tree: Tree, suspects: list[SourceFile]) -> dict[str, object]:
    return {"root": str(tree.workspace), "files": [s.rel for s in suspects]}


def _judged(suspects: list[SourceFile], refused: dict[str, str] | Exception) -> dict[str, str]:
    """Each suspect's verdict: the loader's refusal, or "" (fine); when the worker could not judge them
    (`refused` is its error), FAILED: not known to be safe, so not handed over, and judged again later."""
    if isinstance(refused, Exception):
        return {s.digest: f"{FAILED} ({refused})" for s in suspects}
    return {s.digest: refused.get(s.rel, "") for s in suspects}


def _suspects(tree: Tree, sources: list[SourceFile]) -> list[SourceFile]:
    """The files that define an anchor; the others are judged fine at once (no anchor: no alias to expand)."""
    suspects = [s for s in sources if _has_anchor(tree, s)]
    _remember({s.digest: "" for s in sources if s not in suspects})
    return suspects


def _remember(verdicts: dict[str, str]) -> dict[str, str]:
    with _verdicts_lock:
        _verdicts.update(verdicts)
        while len(_verdicts) > MEMO_SIZE:
            _verdicts.popitem(last=False)
    return verdicts


def _has_anchor(tree: Tree, source: SourceFile) -> bool:
    try:
        data = read_beneath(tree.workspace, source.rel, MAX_FILE_BYTES)
    except OSError:
        return False  # unreadable: the tools cannot read it either
    return _ANCHOR.search(data) is not None
