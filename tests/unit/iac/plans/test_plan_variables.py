"""The variables a failed plan lacks (from its -json diagnostics) and their blocks (iac/plans/variables.py),
and the form iac_plan asks them with (tools/plan_variables.py)."""

from __future__ import annotations

import json

from iac_code.iac.plans.runner import PlanFailed
from iac_code.iac.plans.variables import Declared, declared_variables, unset_variables
from iac_code.tools.base import ToolContext
from iac_code.tools.plan_variables import values_for_unset, var_text, variables_form
from iac_code.tools.questions import Accepted, Answer, Form, Link


def _diagnostic(summary: str, detail: str, severity: str = "error") -> str:
    return json.dumps(
        {"type": "diagnostic", "diagnostic": {"severity": severity, "summary": summary, "detail": detail}}
    )


def test_the_unset_variables_are_the_ones_terraform_names():
    unset = 'The root module input variable "{}" is not set, and has no default value.'
    messages = "\n".join(
        [
            '{"type": "version"}',
            _diagnostic("No value for required variable", unset.format("region")),
            _diagnostic("Unsupported argument", 'An argument named "x" is not expected here.'),
            _diagnostic("No value for required variable", unset.format("tags")),
            _diagnostic("No value for required variable", unset.format("region")),
            _diagnostic("No value for required variable", unset.format("warned"), severity="warning"),
        ]
    )
    assert unset_variables(messages) == ["region", "tags"]


def test_the_blocks_give_type_description_and_sensitivity(tmp_path):
    (tmp_path / "main.tf").write_text(
        'variable "region" {\n  type = string\n  description = "Where"\n}\n'
        'variable "tags" { type = map(string) }\n'
        'variable "token" {\n  sensitive = true\n}\n'
    )
    (tmp_path / "more.tf.json").write_text(json.dumps({"variable": {"size": {"type": "number", "description": "N"}}}))
    (tmp_path / "broken.tf").write_text('variable "lost" {')
    (tmp_path / "outside.tf").symlink_to(tmp_path / "main.tf")
    files = ["broken.tf", "main.tf", "more.tf.json", "outside.tf"]
    assert declared_variables(tmp_path, files) == {
        "region": Declared("region", "string", "Where"),
        "tags": Declared("tags", "map(string)"),
        "token": Declared("token", sensitive=True),
        "size": Declared("size", "number", "N"),
    }


def test_the_form_maps_types_and_asks_every_variable():
    blocks = [Declared("region", "string", "Where"), Declared("n", "number"), Declared("on", "bool")]
    form = variables_form([*blocks, Declared("tags", "map(string)", "Labels"), Declared("any")], "envs/prod")
    assert "envs/prod" in form.message
    assert [(f.name, f.kind, f.title, f.required) for f in form.fields] == [
        ("region", "string", "region", True),
        ("n", "number", "n", True),
        ("on", "boolean", "on", True),
        ("tags", "string", "tags", True),
        ("any", "string", "any", True),
    ]
    assert form.fields[3].description == "Labels (map(string): an HCL or JSON value)"


def test_answers_become_what_terraform_reads_in_var():
    assert [var_text(v) for v in ("eu", 2, 2.5, True, False)] == ["eu", "2", "2.5", "true", "false"]


async def test_the_form_asks_in_the_order_the_module_declares_whatever_order_terraform_named_them(tmp_path):
    (tmp_path / "main.tf").write_text('variable "region" {}\nvariable "copies" { type = number }\n')
    (tmp_path / "tags.tf").write_text('variable "tags" {}\n')
    asked: list[Form | Link] = []

    async def elicit(question: Form | Link) -> Answer:
        asked.append(question)
        return Accepted({"region": "eu", "copies": 2, "tags": "{}", "undeclared": "x"})

    failure = PlanFailed("No value for required variable", unset=["tags", "copies", "region", "undeclared"])
    given = await values_for_unset(failure, tmp_path, ".", ToolContext(tmp_path, elicit=elicit))
    (form,) = asked
    assert isinstance(form, Form)
    assert [field.name for field in form.fields] == ["region", "copies", "tags", "undeclared"]
    assert given == {"region": "eu", "copies": "2", "tags": "{}", "undeclared": "x"}
