"""The input variables a plan lacks, and what the root module's `variable` blocks say of them.

terraform itself decides which variables have no value (no default, nothing in the var files, the
`*.auto.tfvars`, the `TF_VAR_` environment or `-var`): each is an error diagnostic of a failed `plan -json`
naming it. The blocks (`.tf` files of the root module, read without following links) give each its type,
description and whether it is `sensitive`. `.tf.json` and `.tofu` files are read too, the JSON ones as
JSON; a file that cannot be read or parsed only leaves its variables undescribed.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iac_code.iac.plans.diagnostics import diagnostics
from iac_code.iac.safe_read import read_beneath

log = logging.getLogger(__name__)

UNSET_SUMMARY = "No value for required variable"
_UNSET_NAME = re.compile(r'input variable "([^"\\]+)" is not set')
_INTERPOLATED = re.compile(r"^\$\{(.*)\}$", re.DOTALL)
MAX_FILE_BYTES = 4 << 20
_VARIABLE_FILES = (".tf", ".tofu", ".tf.json", ".tofu.json")


@dataclass(frozen=True)
class Declared:
    """A `variable` block: `type` as written ("string", "number", "bool", "map(string)"; "" untyped)."""

    name: str
    type: str = ""
    description: str = ""
    sensitive: bool = False


def unset_variables(messages: str) -> list[str]:
    """The variables a failed `plan -json` (its output, `messages`) says have no value, in its order."""
    names: list[str] = []
    for diagnostic in diagnostics(messages):
        if diagnostic.get("severity") != "error" or diagnostic.get("summary") != UNSET_SUMMARY:
            continue
        if (found := _UNSET_NAME.search(str(diagnostic.get("detail") or ""))) and found[1] not in names:
            names.append(found[1])
    return names


def declared_variables(directory: Path, files: list[str]) -> dict[str, Declared]:
    """The `variable` blocks of the root module's configuration `files` (names in `directory`), by name."""
    found: dict[str, Declared] = {}
    for name in files:
        if not name.endswith(_VARIABLE_FILES):
            continue
        try:
            text = read_beneath(directory, name, MAX_FILE_BYTES).decode("utf-8")
            blocks = _json_blocks(text) if name.endswith(".json") else _hcl_blocks(text)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.info("the variables of %s are not described: %s", name, exc)
            continue
        for variable, body in blocks:
            found[variable] = _declared(variable, body)
    return found


def _hcl_blocks(text: str) -> list[tuple[str, dict[str, Any]]]:
    from hcl2.api import loads as parse_hcl  # lark takes ~50 ms to load: only when a plan lacks variables
    from lark.exceptions import LarkError

    try:
        document = parse_hcl(text)
    except LarkError as exc:
        raise ValueError(f"not HCL: {type(exc).__name__}") from None
    return [(name, body) for block in document.get("variable", []) for name, body in block.items()]


def _json_blocks(text: str) -> list[tuple[str, dict[str, Any]]]:
    document = json.loads(text)
    variables = document.get("variable", {}) if isinstance(document, dict) else {}
    return list(variables.items()) if isinstance(variables, dict) else []


def _declared(name: str, body: Any) -> Declared:
    if not isinstance(body, dict):
        return Declared(name)
    kind = _value(body.get("type"))
    description = _value(body.get("description"))
    sensitive = _value(body.get("sensitive"))
    return Declared(
        name,
        type=_bare_type(kind) if isinstance(kind, str) else "",
        description=description if isinstance(description, str) else "",
        sensitive=sensitive is True,
    )


def _value(attribute: Any) -> Any:
    """An attribute's value: the HCL parser wraps each in a list."""
    return attribute[0] if isinstance(attribute, list) and len(attribute) == 1 else attribute


def _bare_type(expression: str) -> str:
    """`${map(string)}` (the parser's form of an expression) as written: map(string)."""
    found = _INTERPOLATED.match(expression.strip())
    return (found[1] if found else expression).strip()
