"""A running call's question (tools/questions.py) as ACP's `elicitation/create`, and the client's answer back.

Only for a client that advertises `elicitation.form` (a Form) or `elicitation.url` (a Link); otherwise the
question is `unsupported` and never sent. The request is session-scoped and tied to the tool call that
asks (an MCP server's question is tied to the MCP tool's call). Fields map to the schema's property kinds:
a choice is a string with titled `oneOf` options, several choices a multi-select array with titled
`anyOf` items. The answer's action is read with the SDK's models; its content is left for the asker to
check against what it asked (questions.checked_values).
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AcceptElicitationResponse,
    CreateFormSessionElicitationRequest,
    CreateUrlSessionElicitationRequest,
    ElicitationBooleanPropertySchema,
    ElicitationIntegerPropertySchema,
    ElicitationMultiSelectPropertySchema,
    ElicitationNumberPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    TitledMultiSelectItems,
)
from pydantic import ValidationError

from iac_code.acp.schema_v1_21 import ClientCapabilities
from iac_code.tools.questions import Accepted, Answer, Field, Form, Link, NotAnswered, Option

METHOD = "elicitation/create"
Property = (
    ElicitationStringPropertySchema
    | ElicitationNumberPropertySchema
    | ElicitationIntegerPropertySchema
    | ElicitationBooleanPropertySchema
    | ElicitationMultiSelectPropertySchema
)


def supported(capabilities: ClientCapabilities | None, question: Form | Link) -> bool:
    """Whether the client said it can show this kind of question."""
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return (elicitation.url if isinstance(question, Link) else elicitation.form) is not None


def elicitation_request(
    session_id: str, call_id: str, question: Form | Link
) -> CreateFormSessionElicitationRequest | CreateUrlSessionElicitationRequest:
    if isinstance(question, Link):
        return CreateUrlSessionElicitationRequest(
            session_id=session_id,
            tool_call_id=call_id,
            mode="url",
            message=question.message,
            elicitation_id=question.elicitation_id,
            url=question.url,  # type: ignore[arg-type]  # pydantic checks it is a URL
        )
    return CreateFormSessionElicitationRequest(
        session_id=session_id,
        tool_call_id=call_id,
        mode="form",
        message=question.message,
        requested_schema=elicitation_schema(question),
    )


def elicitation_schema(form: Form) -> ElicitationSchema:
    """The form's fields as the schema's flat object of properties."""
    required = [field.name for field in form.fields if field.required]
    return ElicitationSchema(
        type="object",
        properties={field.name: _property(field) for field in form.fields},
        required=required or None,
    )


def _property(field: Field) -> Property:
    title, description = field.title or field.name, field.description or None
    default = field.default
    if field.kind == "boolean":
        flag = default if isinstance(default, bool) else None
        return ElicitationBooleanPropertySchema(type="boolean", title=title, description=description, default=flag)
    if field.kind == "integer":
        return ElicitationIntegerPropertySchema(
            type="integer",
            title=title,
            description=description,
            minimum=_whole(field.minimum),
            maximum=_whole(field.maximum),
            default=default if isinstance(default, int) and not isinstance(default, bool) else None,
        )
    if field.kind == "number":
        number = float(default) if isinstance(default, int | float) and not isinstance(default, bool) else None
        return ElicitationNumberPropertySchema(
            type="number",
            title=title,
            description=description,
            minimum=field.minimum,
            maximum=field.maximum,
            default=number,
        )
    if field.kind == "choices":
        picked = default if isinstance(default, list) else None
        return ElicitationMultiSelectPropertySchema(
            type="array",
            title=title,
            description=description,
            items=TitledMultiSelectItems(any_of=_enum_options(field.options)),
            min_items=_whole(field.minimum),
            max_items=_whole(field.maximum),
            default=picked,
        )
    text = default if isinstance(default, str) else None
    one_of = _enum_options(field.options) if field.kind == "choice" else None
    return ElicitationStringPropertySchema(
        type="string", title=title, description=description, default=text, one_of=one_of
    )


def _enum_options(options: tuple[Option, ...]) -> list[EnumOption]:
    return [EnumOption(const=option.value, title=option.title or option.value) for option in options]


def _whole(bound: float | None) -> int | None:
    return None if bound is None else int(bound)


def parsed_answer(raw: Any) -> Answer:
    """The client's `elicitation/create` result: accepted with its content, declined, cancelled, or failed
    (an answer no variant of the schema reads)."""
    action = raw.get("action") if isinstance(raw, dict) else None
    if action == "decline":
        return NotAnswered("declined")
    if action == "cancel":
        return NotAnswered("cancelled")
    if action != "accept":
        return NotAnswered("failed", f"the client's answer has no known action ({action!r})")
    try:
        accepted = AcceptElicitationResponse.model_validate(raw)
    except ValidationError:
        return NotAnswered("failed", "the client's answer carries content that is not an object")
    return Accepted(accepted.content or {})
