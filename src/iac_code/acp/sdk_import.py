"""Importing the ACP SDK at half the cost: its ~280 pydantic models built on first use, their field
docstrings read from one parse of the schema module.

`import acp` takes ~0.45 s here, most of a fresh process's `session/load`. Two parts of it are work
nothing needs at that moment:

- Validators and serializers (~27%). The SDK does not set `defer_build`, so pydantic builds every
  model's core schema at class creation. With `defer_build` each model is built by pydantic itself,
  the same way, the first time it validates or serializes; most of the schema (elicitation, terminals,
  file system requests) is never used by this agent.
- Field descriptions (~30%). The SDK's BaseModel sets `use_attribute_docstrings`, so on Python < 3.13
  pydantic finds each class's source from the defining frame, tokenizes it and parses it again, once
  per class. Here the schema module is parsed once and every class's docstrings are read from that
  tree with pydantic's own visitor: the same descriptions (only JSON Schema generation reads them).

Neither changes what is validated or sent: tests/unit/test_sdk_import.py compares every model's JSON
Schema with a plain import's, checks that both adjustments still take effect, and the e2e tests check
the wire of the real process against the SDK's models imported plainly. Both hooks are pydantic
internals, so they are used only with the pydantic minor they were checked against (`CHECKED_PYDANTIC`;
the SDK's minor is pinned): with any other the SDK is imported as it is, only slower, and the unit test
fails, asking for the check to be made again.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

logger = logging.getLogger(__name__)

SCHEMA_MODULE = "acp.schema"
_EXTRACTOR = "extract_docstrings_from_cls"  # what pydantic._internal._fields calls for each model class
CHECKED_PYDANTIC = "2.14"  # the minor the hooks below were checked against (the SDK's is pinned in pyproject.toml)

Docstrings = dict[str, str]


def import_acp() -> None:
    """Import the ACP SDK (`acp`, hence `acp.schema`), with its models deferred where that is known to work."""
    if SCHEMA_MODULE in sys.modules or not hooks_apply():
        importlib.import_module("acp")
        return
    with _deferred_builds(), _docstrings_from_one_parse():
        importlib.import_module("acp")


def hooks_apply() -> bool:
    """Whether the installed pydantic is the version the hooks were checked against."""
    from pydantic.version import VERSION

    if VERSION.startswith(CHECKED_PYDANTIC + "."):
        return True
    logger.debug("pydantic %s is not %s.*: the ACP SDK's models are built at import", VERSION, CHECKED_PYDANTIC)
    return False


@contextmanager
def _deferred_builds() -> Iterator[None]:
    """Models created meanwhile (in any thread: only `acp` is imported in this window) are built on first
    use. The default is read at class creation only; the models' own `model_config` is left as declared."""
    from pydantic._internal._config import config_defaults

    declared = config_defaults["defer_build"]
    config_defaults["defer_build"] = True
    try:
        yield
    finally:
        config_defaults["defer_build"] = declared


@contextmanager
def _docstrings_from_one_parse() -> Iterator[None]:
    from pydantic._internal import _fields

    original: Callable[..., Docstrings] = getattr(_fields, _EXTRACTOR)
    by_line: dict[int, tuple[str, Docstrings]] | None = None

    def extract(cls: type[Any], use_inspect: bool = False) -> Docstrings:
        nonlocal by_line
        frame = _defining_frame(cls) if cls.__module__ == SCHEMA_MODULE else None
        if frame is None:
            return original(cls, use_inspect=use_inspect)
        if by_line is None:
            by_line = _docstrings_by_class_line(frame.f_code.co_filename)
        name, docstrings = by_line.get(frame.f_lineno, ("", {}))
        if name != cls.__name__:  # not a plain top-level class statement: pydantic's own way
            return original(cls, use_inspect=use_inspect)
        return dict(docstrings)

    setattr(_fields, _EXTRACTOR, extract)
    try:
        yield
    finally:
        setattr(_fields, _EXTRACTOR, original)


def _defining_frame(cls: type[Any]) -> FrameType | None:
    """The frame of the schema module's body, executing the `class` statement of `cls` (as pydantic finds it)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == cls.__module__:
            return frame
        frame = frame.f_back
    return None


def _docstrings_by_class_line(path: str) -> dict[int, tuple[str, Docstrings]]:
    """For each top-level class of the module in `path`: its line → (name, attribute docstrings)."""
    from pydantic._internal._docs_extraction import DocstringVisitor

    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.decorator_list:
            visitor = DocstringVisitor()
            visitor.generic_visit(node)  # the class body, as pydantic visits it
            found[node.lineno] = (node.name, visitor.attrs)
    return found
