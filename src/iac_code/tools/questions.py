"""A structured question to the user (ACP elicitation), in neutral terms.

A `Form` is a message and typed fields; a `Link` sends the user to a URL (an MCP server's URL-mode
elicitation). A running tool asks through `ToolContext.elicit`; the session's face (acp/elicitation.py makes
it ACP's `elicitation/create`) answers `Accepted` with the client's raw content, or `NotAnswered` with why:
the user declined or cancelled, the client cannot show it ("unsupported": no client, or no
`elicitation.form`/`.url` capability), or the request failed. The content is only what the client sent:
`checked_values` holds it against the form before anyone uses it.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
Value = str | int | float | bool | list[str]
Why = Literal["declined", "cancelled", "unsupported", "failed"]


@dataclass(frozen=True)
class Option:
    """One value a choice field offers, with the title the user reads."""

    value: str
    title: str = ""


@dataclass(frozen=True)
class Field:
    """One answer asked for: `choice` picks one of `options`, `choices` any of them; `minimum`/`maximum`
    bound a number (or the count of `choices`)."""

    name: str
    kind: FieldKind
    title: str = ""
    description: str = ""
    required: bool = True
    options: tuple[Option, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    default: Value | None = None


@dataclass(frozen=True)
class Form:
    message: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Link:
    """A question answered on a web page (URL mode): the answer says only whether the user went there."""

    message: str
    url: str
    elicitation_id: str


@dataclass(frozen=True)
class Accepted:
    content: Mapping[str, object]  # as the client sent it: check it with checked_values


@dataclass(frozen=True)
class NotAnswered:
    why: Why
    detail: str = ""  # for "failed": what went wrong


Answer = Accepted | NotAnswered
# How a running call asks: the session shows the question on its face and waits for the answer (a turn
# cancelled meanwhile cancels the wait).
Elicit = Callable[[Form | Link], Awaitable[Answer]]
UNSUPPORTED = NotAnswered("unsupported")


class InvalidAnswer(ValueError):
    """The client's content does not answer the form (says which field and why)."""


def checked_values(form: Form, content: Mapping[str, object]) -> dict[str, Value]:
    """The answered fields of `form` from `content`, each checked against its field; InvalidAnswer when a
    required one is missing, one has the wrong type or is out of bounds, or one was never asked."""
    fields = {field.name: field for field in form.fields}
    if unknown := sorted(set(content) - set(fields)):
        raise InvalidAnswer(f"answers to fields that were not asked: {', '.join(unknown)}")
    values: dict[str, Value] = {}
    for name, field in fields.items():
        value = content.get(name)
        if value is None:
            if field.required:
                raise InvalidAnswer(f"'{name}' is required but was not answered")
            continue
        values[name] = _checked(field, value)
    return values


def _checked(field: Field, value: object) -> Value:
    if field.kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidAnswer(f"'{field.name}' must be true or false")
        return value
    if field.kind in ("number", "integer"):
        return _checked_number(field, value)
    if field.kind == "choices":
        return _checked_choices(field, value)
    if not isinstance(value, str):
        raise InvalidAnswer(f"'{field.name}' must be a string")
    if field.kind == "choice" and value not in {option.value for option in field.options}:
        raise InvalidAnswer(f"'{field.name}' must be one of the options offered, not {value!r}")
    return value


def _checked_number(field: Field, value: object) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidAnswer(f"'{field.name}' must be a number")
    if field.kind == "integer":
        if value != int(value):
            raise InvalidAnswer(f"'{field.name}' must be a whole number")
        value = int(value)
    _within(field, value, "")
    return value


def _checked_choices(field: Field, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidAnswer(f"'{field.name}' must be a list of the options offered")
    offered = {option.value for option in field.options}
    if strange := [item for item in value if item not in offered]:
        raise InvalidAnswer(f"'{field.name}' holds values that were not offered: {', '.join(map(repr, strange))}")
    _within(field, len(value), " choices")
    return list(value)


def _within(field: Field, number: float, unit: str) -> None:
    if field.minimum is not None and number < field.minimum:
        raise InvalidAnswer(f"'{field.name}' must be at least {field.minimum:g}{unit}")
    if field.maximum is not None and number > field.maximum:
        raise InvalidAnswer(f"'{field.name}' must be at most {field.maximum:g}{unit}")


def as_text(form: Form) -> str:
    """The form as a question in plain text (for a client that cannot show a form)."""
    lines = [form.message]
    for field in form.fields:
        label = field.title or field.name
        hint = _hint(field)
        line = f"- {label}{f' ({hint})' if hint else ''}"
        lines.append(f"{line}: {field.description}" if field.description else line)
    return "\n".join(lines)


def _hint(field: Field) -> str:
    parts: list[str] = []
    if field.kind in ("choice", "choices"):
        words = " / ".join(option.title or option.value for option in field.options)
        parts.append(f"one of: {words}" if field.kind == "choice" else f"any of: {words}")
    elif field.kind == "boolean":
        parts.append("yes or no")
    elif field.kind in ("number", "integer"):
        parts.append("a whole number" if field.kind == "integer" else "a number")
        if field.minimum is not None:
            parts.append(f"at least {field.minimum:g}")
        if field.maximum is not None:
            parts.append(f"at most {field.maximum:g}")
    if field.default is not None:
        parts.append(f"default {field.default}")
    if not field.required:
        parts.append("optional")
    return ", ".join(parts)
