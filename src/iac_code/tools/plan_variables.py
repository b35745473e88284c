"""iac_plan asks the user for the input variables a plan lacks, when their client shows forms.

terraform names the variables that have no value (iac/plans/variables.py); the root module's `variable`
blocks say their type, description and whether they are sensitive. The non-sensitive ones are asked in one
form (ToolContext.elicit), in the order the module declares them: the name as the title,
`string`/`number`/`bool` as such, any other type as a string holding an HCL/JSON value. The answers are
passed as `-var` for this plan only (never written into the user's files). A sensitive one is never asked (a
form's answer passes through the client and the conversation): the user is told to set it (TF_VAR_name),
and nothing is asked while one is missing, since the plan would fail anyway. Without a client that shows
forms the plan fails as it always did.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from iac_code.iac.plans.runner import PlanFailed, configuration_files
from iac_code.iac.plans.variables import Declared, declared_variables
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.questions import Field, FieldKind, Form, InvalidAnswer, NotAnswered, Value, checked_values

_KINDS: dict[str, FieldKind] = {"string": "string", "number": "number", "bool": "boolean"}
NOT_GIVEN = {
    "declined": "The user was asked for these variables and declined.",
    "cancelled": "The user was asked for these variables and dismissed the question.",
    "failed": "Asking the user for these variables failed.",
}


async def values_for_unset(failure: PlanFailed, directory: Path, shown_as: str, ctx: ToolContext) -> dict[str, str]:
    """The user's values (as -var text) for the variables `failure` says have no value; otherwise ToolError
    with the failure and why nothing was asked. `shown_as`: the module's directory as the user reads it."""
    if not failure.unset or ctx.elicit is None:
        raise ToolError(str(failure))
    declared = await asyncio.to_thread(declared_variables, directory, configuration_files(directory))
    # in the module's order: terraform names the unset ones in no fixed order (it evaluates them concurrently)
    unset = set(failure.unset)
    blocks = [block for name, block in declared.items() if name in unset]
    blocks += [Declared(name) for name in failure.unset if name not in declared]
    if sensitive := [block.name for block in blocks if block.sensitive]:
        raise ToolError(f"{failure}\n{sensitive_advice(sensitive)}")
    form = variables_form(blocks, shown_as)
    answer = await ctx.elicit(form)
    if isinstance(answer, NotAnswered):
        if answer.why == "unsupported":
            raise ToolError(str(failure))
        raise ToolError(f"{failure}\n{NOT_GIVEN[answer.why]}")
    try:
        values = checked_values(form, answer.content)
    except InvalidAnswer as exc:
        raise ToolError(f"{failure}\nThe user's client sent values that do not fit the question: {exc}") from None
    return {name: var_text(value) for name, value in values.items()}


def sensitive_advice(names: list[str]) -> str:
    listed = ", ".join(names)
    settings = ", ".join(f"TF_VAR_{name}" for name in names)
    return (
        f"Not asked: {listed} {'is' if len(names) == 1 else 'are'} sensitive, and a sensitive value is never asked "
        f"for here. Tell the user to set {settings} in the environment iac-code runs in (or in a var file), then "
        "plan again."
    )


def variables_form(blocks: list[Declared], shown_as: str) -> Form:
    message = (
        f"Planning {shown_as} needs values for these input variables: they have no default and are not set in "
        "a var file or the environment. They are used for this plan only."
    )
    return Form(message, tuple(_field(block) for block in blocks))


def _field(block: Declared) -> Field:
    kind = _KINDS.get(block.type, "string")
    description = block.description
    if block.type and block.type not in _KINDS:
        description = f"{description} ({block.type}: an HCL or JSON value)".strip()
    return Field(block.name, kind, title=block.name, description=description)


def var_text(value: Value) -> str:
    """A checked answer as terraform reads it in `-var name=value`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)
