"""Importing the ACP SDK at half the cost: its ~280 pydantic models built on first use, their field
docstrings read with one parse per class.

`import acp` takes ~0.45 s here, most of a fresh process's `session/load`. Two parts of it are work
nothing needs at that moment:

- Validators and serializers (~27%). The SDK does not set `defer_build`, so pydantic builds every
  model's core schema at class creation. With `defer_build` each model is built by pydantic itself,
  the same way, the first time it validates or serializes; most of the schema (elicitation, terminals,
  file system requests) is never used by this agent.
- Field descriptions (~30%). The SDK's BaseModel sets `use_attribute_docstrings`, so on Python < 3.13
  pydantic finds each class's source from the defining frame, tokenizes it (in Python) and parses it
  twice. Here each class's block is parsed once and read with pydantic's own visitor: the same
  descriptions (only JSON Schema generation reads them).

Neither changes what is validated or sent: tests/unit/acp/test_sdk_import.py compares every model's JSON
Schema with a plain import's, checks that both adjustments still take effect, and the e2e tests check
the wire of the real process against the SDK's models imported plainly. Both hooks are pydantic
internals, so they are used only with the pydantic minor they were checked against (`CHECKED_PYDANTIC`;
the SDK's minor is pinned): with any other the SDK is imported as it is, only slower, and the unit test
fails, asking for the check to be made again.
"""

from __future__ import annotations

import ast
import importlib
import linecache
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
    with _deferred_builds(), _docstrings_parsed_once():
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
def _docstrings_parsed_once() -> Iterator[None]:
    from pydantic._internal import _fields

    original: Callable[..., Docstrings] = getattr(_fields, _EXTRACTOR)

    def extract(cls: type[Any], use_inspect: bool = False) -> Docstrings:
        frame = _defining_frame(cls) if cls.__module__ == SCHEMA_MODULE else None
        found = None
        if frame is not None:  # the source as pydantic reads it: linecache's
            found = _class_docstrings(linecache.getlines(frame.f_code.co_filename), frame.f_lineno, cls.__name__)
        return found if found is not None else original(cls, use_inspect=use_inspect)

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


def _class_docstrings(lines: list[str], start: int, name: str) -> Docstrings | None:
    """The attribute docstrings of the top-level class `name` whose statement is line `start` of `lines`,
    read as pydantic reads them; None if its block does not parse as that class alone (pydantic then
    reads it its own way). The block ends at the next line that starts a top-level statement: one that
    is really inside the class (in a string, in brackets) leaves a block that does not parse.

    One small parse per class, not of the whole module: a single parse of 5,800 lines would hold the
    GIL for tens of milliseconds, while the main thread is answering the client."""
    from pydantic._internal._docs_extraction import DocstringVisitor

    end = start
    while end < len(lines) and not _starts_top_level_statement(lines[end]):
        end += 1
    try:
        tree = ast.parse("".join(lines[start - 1 : end]))
    except SyntaxError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not (isinstance(node, ast.ClassDef) and node.name == name and not node.decorator_list):
        return None
    visitor = DocstringVisitor()
    visitor.generic_visit(node)  # the class body, as pydantic visits it
    return visitor.attrs


def _starts_top_level_statement(line: str) -> bool:
    return bool(line.strip()) and not line[0].isspace() and not line.startswith("#")
