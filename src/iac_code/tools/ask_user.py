"""ask_user: the model asks the user a structured question (choices, a number, a string, a yes/no).

With a client that shows forms (ACP `elicitation.form`) the question is a form (`ToolContext.elicit`,
tools/questions.py) and the checked answer comes back to the model; a declined or dismissed form is said
plainly, and an answer that does not fit the question (a client's mistake) is an error the model reads.
Without one (no such capability, `iac-code -p`) the question is the call's result, in plain text, and the
turn ends there: the user answers in their next prompt. It changes nothing, so it is never asked about.
"""

from __future__ import annotations

import json
from typing import Any

from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult
from iac_code.tools.questions import (
    Accepted,
    Field,
    FieldKind,
    Form,
    InvalidAnswer,
    NotAnswered,
    Option,
    as_text,
    checked_values,
)
from iac_code.tools.workspace import shorten

TOOL_NAME = "ask_user"
MAX_FIELDS = 10
MAX_OPTIONS = 50
KINDS: tuple[FieldKind, ...] = ("string", "number", "integer", "boolean", "choice", "choices")
AS_TEXT = (
    "\n\n(Asked in plain text: the user's client cannot show a form. The turn ends here; the user's answer "
    "will be their next message.)"
)
NOT_ANSWERED = {
    "declined": "The user declined to answer the question.",
    "cancelled": "The user dismissed the question without answering.",
}

_OPTION = {
    "type": "object",
    "properties": {"value": {"type": "string"}, "title": {"type": "string", "description": "What the user reads."}},
    "required": ["value"],
}
_FIELD = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The answer's key, e.g. region."},
        "kind": {
            "type": "string",
            "enum": list(KINDS),
            "description": "choice: one of options; choices: any of options (multi-select); boolean: yes/no.",
        },
        "title": {"type": "string", "description": "The label the user reads (default: the name)."},
        "description": {"type": "string"},
        "required": {"type": "boolean", "description": "Default true."},
        "options": {"type": "array", "items": _OPTION, "description": "For choice and choices."},
        "minimum": {"type": "number", "description": "number/integer: the lowest value; choices: fewest picks."},
        "maximum": {"type": "number", "description": "number/integer: the highest value; choices: most picks."},
    },
    "required": ["name", "kind"],
}


class AskUserTool:
    name = TOOL_NAME
    category: Category = "read"
    kind: Kind = "other"
    description = (
        "Ask the user a question whose answer you need to go on and cannot find yourself: a choice between "
        "options, a number, a string, a yes/no, or several of these at once, as a form. Returns their answers, "
        "or that they declined. Ask only what matters (a region, an instance size, whether to keep data), never "
        "secrets (passwords, keys): tell the user how to provide those instead."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "The question, as the user reads it."},
            "fields": {"type": "array", "items": _FIELD, "minItems": 1, "maxItems": MAX_FIELDS},
        },
        "required": ["message", "fields"],
    }

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        message = args.get("message")
        return f"Ask: {shorten(message, 60)}" if isinstance(message, str) and message else "Ask the user"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        form = parse_form(args)
        answer = await ctx.elicit(form) if ctx.elicit is not None else NotAnswered("unsupported")
        if isinstance(answer, Accepted):
            try:
                values = checked_values(form, answer.content)
            except InvalidAnswer as exc:
                raise ToolError(f"The user's client sent an answer that does not fit the question: {exc}") from None
            return ToolResult(
                f"The user answered: {json.dumps(values, ensure_ascii=False)}",
                raw_output={"action": "accept", "answers": values},
            )
        if answer.why == "unsupported":
            return ToolResult(as_text(form) + AS_TEXT, raw_output={"action": "asked_as_text"}, ends_turn=True)
        if answer.why == "failed":
            raise ToolError(f"The question could not be asked: {answer.detail or 'the client failed'}")
        return ToolResult(NOT_ANSWERED[answer.why], raw_output={"action": answer.why})


def parse_form(args: dict[str, Any]) -> Form:
    """The call's question as a Form; a ToolError tells the model what to fix."""
    message = args.get("message")
    if not isinstance(message, str) or not message.strip():
        raise ToolError("'message' is required: the question the user reads")
    fields = args.get("fields")
    if not isinstance(fields, list) or not fields or len(fields) > MAX_FIELDS:
        raise ToolError(f"'fields' must be a list of 1 to {MAX_FIELDS} fields")
    parsed = tuple(_field(index, field) for index, field in enumerate(fields))
    names = [field.name for field in parsed]
    if len(set(names)) != len(names):
        raise ToolError("each field needs its own 'name'")
    return Form(message, parsed)


def _field(index: int, field: Any) -> Field:
    where = f"fields[{index}]"
    if not isinstance(field, dict):
        raise ToolError(f"{where} must be an object with name and kind")
    name, kind = field.get("name"), field.get("kind")
    if not isinstance(name, str) or not name.strip():
        raise ToolError(f"{where}.name is required")
    if kind not in KINDS:
        raise ToolError(f"{where}.kind must be one of {', '.join(KINDS)}")
    options = _options(where, field.get("options"))
    if kind in ("choice", "choices") and not options:
        raise ToolError(f"{where} ({kind}) needs options")
    return Field(
        name=name,
        kind=kind,
        title=_text(where, field, "title"),
        description=_text(where, field, "description"),
        required=_required(where, field.get("required", True)),
        options=options if kind in ("choice", "choices") else (),
        minimum=_number(where, field, "minimum"),
        maximum=_number(where, field, "maximum"),
    )


def _options(where: str, value: Any) -> tuple[Option, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_OPTIONS:
        raise ToolError(f"{where}.options must be a list of at most {MAX_OPTIONS} {{value, title}}")
    options = []
    for option in value:
        if isinstance(option, str):  # models often give the values alone
            option = {"value": option}
        if not isinstance(option, dict) or not isinstance(option.get("value"), str) or not option["value"]:
            raise ToolError(f"{where}.options: each needs a non-empty string 'value'")
        title = option.get("title")
        options.append(Option(option["value"], title if isinstance(title, str) else ""))
    if len({option.value for option in options}) != len(options):
        raise ToolError(f"{where}.options: each value once")
    return tuple(options)


def _text(where: str, field: dict[str, Any], key: str) -> str:
    value = field.get(key)
    if value is not None and not isinstance(value, str):
        raise ToolError(f"{where}.{key} must be a string")
    return value or ""


def _required(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ToolError(f"{where}.required must be true or false")
    return value


def _number(where: str, field: dict[str, Any], key: str) -> float | None:
    value = field.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"{where}.{key} must be a number")
    return float(value)
