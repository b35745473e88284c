"""acp/sdk_import: the ACP SDK's models deferred and their docstrings read from one parse, with the same
result as a plain import. Each import runs in a fresh interpreter (this one has imported the SDK already)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

from iac_code.acp.sdk_import import CHECKED_PYDANTIC, hooks_apply

# Prints what the import did (before anything builds a model), then every model's JSON Schemas.
_CHILD = """
import json, sys
from pydantic import BaseModel
from pydantic._internal import _fields

extracted_by_pydantic = []
pydantic_extract = _fields.extract_docstrings_from_cls

def counting(cls, use_inspect=False):
    extracted_by_pydantic.append(f"{cls.__module__}.{cls.__qualname__}")
    return pydantic_extract(cls, use_inspect=use_inspect)

_fields.extract_docstrings_from_cls = counting
if sys.argv[1] == "hooked":
    from iac_code.acp.sdk_import import import_acp
    import_acp()
else:
    import acp
import acp.schema

models = {
    name: model for name, model in vars(acp.schema).items()
    if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == "acp.schema"
}
effect = {
    "models": len(models),
    "built": sorted(name for name, model in models.items() if model.__pydantic_complete__),
    "extracted_by_pydantic": [name for name in extracted_by_pydantic if name.startswith("acp.schema.")],
}
schemas = {
    name: [model.model_json_schema(mode="validation"), model.model_json_schema(mode="serialization")]
    for name, model in sorted(models.items())
}
json.dump({"effect": effect, "schemas": schemas}, sys.stdout)
"""


def _import(how: str) -> dict:
    child = subprocess.run([sys.executable, "-c", _CHILD, how], capture_output=True, text=True, check=True)
    return json.loads(child.stdout)


def test_the_hooks_are_used_with_the_installed_versions():
    # Failing here means pydantic or the ACP SDK moved: check that acp/sdk_import.py's hooks still do
    # what its docstring says with the new version, then update CHECKED_PYDANTIC or the SDK's pin.
    assert hooks_apply(), f"pydantic is not {CHECKED_PYDANTIC}.*: re-check acp/sdk_import.py"
    assert importlib.metadata.version("agent-client-protocol").startswith("0.12.")


def test_models_are_built_on_first_use_from_one_parse_and_are_the_same_as_a_plain_import():
    plain, hooked = _import("plain"), _import("hooked")
    assert plain["effect"]["models"] == hooked["effect"]["models"] > 250
    # Without the hooks pydantic builds every model at import and reads each one's source itself.
    assert len(plain["effect"]["built"]) == plain["effect"]["models"]
    assert len(plain["effect"]["extracted_by_pydantic"]) > 250
    # With them, no class's source read by pydantic, and (almost) nothing built until used: the few built
    # are those the schema module itself instantiates (the capabilities, as defaults of other models).
    assert hooked["effect"]["extracted_by_pydantic"] == []
    assert len(hooked["effect"]["built"]) < 10, hooked["effect"]["built"]
    # The same models: fields, aliases, defaults, types and descriptions, for validation and serialization.
    assert hooked["schemas"] == plain["schemas"]
