"""An MCP server's `elicitation/create` as the user's question (tools/questions.py), and the answer back.

A form's `requestedSchema` is MCP's flat object of primitive properties: strings (with `enum`, legacy
`enumNames`, or titled `oneOf`), numbers and integers (minimum, maximum), booleans, and multi-select arrays
of string options (`items.enum` or titled `items.anyOf`). A URL-mode request becomes a Link. A schema this
does not read is declined: the user could not be shown it. So is every question when no one can be asked
(MCP: a client without elicitation declines).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import mcp_types

from iac_code.tools.questions import (
    Accepted,
    Answer,
    Field,
    FieldKind,
    Form,
    InvalidAnswer,
    Link,
    Option,
    Value,
    checked_values,
)

logger = logging.getLogger(__name__)

DECLINE = mcp_types.ElicitResult(action="decline")
CANCEL = mcp_types.ElicitResult(action="cancel")
_SCALARS: dict[str, FieldKind] = {"number": "number", "integer": "integer", "boolean": "boolean"}


class Unreadable(ValueError):
    """A requested schema outside MCP's restricted subset."""


def question_of(params: mcp_types.ElicitRequestParams) -> Form | Link:
    """The server's request as a question; Unreadable when its schema is not one a form can show."""
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        return Link(params.message, params.url, params.elicitation_id or uuid.uuid4().hex)
    schema = params.requested_schema
    properties = schema.get("properties")
    if schema.get("type", "object") != "object" or not isinstance(properties, dict):
        raise Unreadable("the requested schema is not an object of properties")
    required = schema.get("required") or []
    if not isinstance(required, list):
        raise Unreadable("'required' is not a list")
    fields = tuple(_field(name, spec, name in required) for name, spec in properties.items())
    return Form(params.message, fields)


def result_of(question: Form | Link, answer: Answer) -> mcp_types.ElicitResult:
    """The user's answer as the server reads it: declined when the question could not be shown (MCP's word
    for a client without elicitation); a form's content checked against what the server asked."""
    if not isinstance(answer, Accepted):
        return CANCEL if answer.why in ("cancelled", "failed") else DECLINE
    if isinstance(question, Link):
        return mcp_types.ElicitResult(action="accept")
    try:
        content: dict[str, Value | None] = dict(checked_values(question, answer.content))
    except InvalidAnswer as exc:  # the client's mistake: the server must not get what it did not ask for
        logger.warning("an MCP elicitation's answer does not fit its form (%s): cancelled", exc)
        return CANCEL
    return mcp_types.ElicitResult(action="accept", content=dict(content))


def _field(name: str, spec: Any, required: bool) -> Field:
    if not isinstance(spec, dict):
        raise Unreadable(f"property '{name}' is not an object")
    kind, options = _kind(name, spec)
    bounds = ("minItems", "maxItems") if kind == "choices" else ("minimum", "maximum")
    return Field(
        name=name,
        kind=kind,
        title=_text(spec.get("title")),
        description=_text(spec.get("description")),
        required=required,
        options=options,
        minimum=_number(spec.get(bounds[0])),
        maximum=_number(spec.get(bounds[1])),
        default=_default(spec.get("default")),
    )


def _kind(name: str, spec: dict[str, Any]) -> tuple[FieldKind, tuple[Option, ...]]:
    kind = spec.get("type")
    if kind in _SCALARS:
        return _SCALARS[kind], ()
    if kind == "array":
        items = spec.get("items")
        options = _options(items if isinstance(items, dict) else {}, "anyOf")
        if not options:
            raise Unreadable(f"property '{name}' is an array without string options")
        return "choices", options
    if kind == "string":
        options = _options(spec, "oneOf")
        return ("choice", options) if options else ("string", ())
    raise Unreadable(f"property '{name}' has a type a form cannot show ({kind!r})")


def _options(spec: dict[str, Any], titled: str) -> tuple[Option, ...]:
    """Options from a titled list (`oneOf`/`anyOf` of {const, title}) or `enum` (with legacy `enumNames`)."""
    entries = spec.get(titled)
    if isinstance(entries, list):
        return tuple(
            Option(str(entry["const"]), _text(entry.get("title")))
            for entry in entries
            if isinstance(entry, dict) and isinstance(entry.get("const"), str)
        )
    values, names = spec.get("enum"), spec.get("enumNames")
    if not isinstance(values, list):
        return ()
    titles = names if isinstance(names, list) and len(names) == len(values) else [""] * len(values)
    return tuple(
        Option(value, _text(title)) for value, title in zip(values, titles, strict=True) if isinstance(value, str)
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _default(value: Any) -> Value | None:
    if isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None
