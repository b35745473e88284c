"""A schema block as rawOutput and as the model's text; a document cut into rows; the lock file's versions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from iac_code.iac.schemas.document import BUILTIN, DocumentError, document_rows
from iac_code.iac.schemas.lock import pinned_versions
from iac_code.iac.schemas.shape import type_expression, type_schema
from iac_code.iac.schemas.text import schema_text

BUCKET: dict[str, Any] = {
    "description": "A storage bucket.\n\nLonger text the model need not read.",
    "attributes": {
        "name": {"type": "string", "required": True, "description": "The bucket's name."},
        "tags": {"type": ["map", "string"], "optional": True},
        "arn": {"type": "string", "computed": True},
        "region": {"type": "string", "optional": True, "computed": True},
        "secret": {"type": "string", "optional": True, "sensitive": True, "deprecated": True},
        "rules": {
            "nested_type": {
                "nesting_mode": "list",
                "attributes": {"id": {"type": "string", "required": True}},
            },
            "optional": True,
        },
    },
    "block_types": {
        "versioning": {
            "nesting_mode": "list",
            "max_items": 1,
            "block": {
                "attributes": {"enabled": {"type": "bool", "optional": True, "description": "Keep versions."}},
                "block_types": {
                    "expiry": {"nesting_mode": "set", "min_items": 1, "block": {"attributes": {}}},
                },
            },
        }
    },
}


@pytest.mark.parametrize(
    ("cty", "written"),
    [
        ("string", "string"),
        ("dynamic", "any"),
        (["list", "string"], "list(string)"),
        (["map", ["set", "number"]], "map(set(number))"),
        (["tuple", ["string", "bool"]], "tuple([string, bool])"),
        (["object", {"b": "number", "a": "string"}], "object({a = string, b = number})"),
        (["object", {"a": "string", "b": "bool"}, ["b"]], "object({a = string, b = optional(bool)})"),
        (None, ""),
    ],
)
def test_cty_types_are_written_as_type_constraints(cty: Any, written: str) -> None:
    assert type_expression(cty) == written


def test_raw_output_lists_attributes_and_nested_blocks() -> None:
    schema = type_schema("registry.terraform.io/acme/store", "1.2.3", "resource", "store_bucket", BUCKET)
    assert {k: schema[k] for k in ("provider", "version", "kind", "type", "deprecated")} == {
        "provider": "registry.terraform.io/acme/store",
        "version": "1.2.3",
        "kind": "resource",
        "type": "store_bucket",
        "deprecated": False,
    }
    by_name = {entry["name"]: entry for entry in schema["attributes"]}
    assert [entry["name"] for entry in schema["attributes"]] == ["arn", "name", "region", "rules", "secret", "tags"]
    assert by_name["name"] == {
        "name": "name",
        "type": "string",
        "required": True,
        "optional": False,
        "computed": False,
        "sensitive": False,
        "deprecated": False,
        "description": "The bucket's name.",
    }
    assert by_name["secret"]["sensitive"] and by_name["secret"]["deprecated"]
    assert by_name["rules"]["type"] == "list(object)" and by_name["rules"]["nesting"] == "list"
    assert [a["name"] for a in by_name["rules"]["attributes"]] == ["id"]
    (versioning,) = schema["blocks"]
    assert (versioning["name"], versioning["nesting"], versioning["minItems"], versioning["maxItems"]) == (
        "versioning",
        "list",
        0,
        1,
    )
    assert versioning["blocks"][0]["minItems"] == 1 and versioning["blocks"][0]["maxItems"] is None


def test_the_text_puts_required_first_and_indents_nested_blocks() -> None:
    text = schema_text(type_schema("registry.terraform.io/acme/store", "1.2.3", "resource", "store_bucket", BUCKET))
    assert text == (
        'resource "store_bucket": registry.terraform.io/acme/store 1.2.3\n'
        "A storage bucket.\n"
        "attributes:\n"
        "  name: string, required — The bucket's name.\n"
        "  region: string, optional, computed\n"
        "  rules: list(object), optional\n"
        "    id: string, required\n"
        "  secret: string, optional, sensitive, deprecated\n"
        "  tags: map(string), optional\n"
        "  arn: string, computed\n"
        "blocks:\n"
        "  versioning (list, max 1):\n"
        "    enabled: bool, optional — Keep versions.\n"
        "    expiry (set, min 1)\n"
    )


def test_a_long_text_drops_descriptions_then_cuts_its_tail() -> None:
    attributes = {f"a{n:03d}": {"type": "string", "optional": True, "description": "d" * 150} for n in range(200)}
    schema = type_schema("p", None, "data", "big", {"attributes": attributes})
    shorter = schema_text(schema, limit=8_000)
    assert "version unknown" in shorter.splitlines()[0]
    assert "ddd" not in shorter and shorter.endswith("(descriptions left out to fit)\n")
    cut = schema_text(schema, limit=2_000)
    assert len(cut) <= 2_000 and cut.rstrip().endswith("more lines left out")


def test_document_rows_take_versions_from_the_lock_file_and_the_binary() -> None:
    document = {
        "format_version": "1.0",
        "provider_schemas": {
            "registry.terraform.io/hashicorp/aws": {
                "resource_schemas": {"aws_instance": {"block": {"attributes": {}}}},
                "data_source_schemas": {"aws_ami": {"block": {}}},
            },
            # a fork defining the same type: the provider named like the type's prefix keeps it
            "registry.terraform.io/other/fork": {"resource_schemas": {"aws_instance": {"block": {"x": 1}}}},
            BUILTIN: {"resource_schemas": {"terraform_data": {"block": {}}}},
        },
    }
    pinned = {"registry.terraform.io/hashicorp/aws": "5.31.0"}
    providers, rows = document_rows(json.dumps(document).encode(), pinned, "1.11.4")
    assert providers == {
        "registry.terraform.io/hashicorp/aws": "5.31.0",
        "registry.terraform.io/other/fork": None,
        BUILTIN: "1.11.4",
    }
    assert sorted((row.kind, row.name, row.provider) for row in rows) == [
        ("data", "aws_ami", "registry.terraform.io/hashicorp/aws"),
        ("resource", "aws_instance", "registry.terraform.io/hashicorp/aws"),
        ("resource", "terraform_data", BUILTIN),
    ]


@pytest.mark.parametrize("document", [b"not json", b"[]", b'{"provider_schemas": {}}'])
def test_what_is_not_a_schema_document_is_refused(document: bytes) -> None:
    with pytest.raises(DocumentError):
        document_rows(document, {}, "1.0.0")


def test_an_empty_configuration_has_no_providers() -> None:
    assert document_rows(b'{"format_version": "1.0"}', {}, "1.0.0") == ({}, [])


def test_pinned_versions_from_a_lock_file() -> None:
    lock = """# This file is maintained automatically by "terraform init".
provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.31.0"
  constraints = "~> 5.0"
  hashes = [
    "h1:abc=",
  ]
}

provider "registry.opentofu.org/hashicorp/random" {
  version = "3.6.0"
}
"""
    assert pinned_versions(lock) == {
        "registry.terraform.io/hashicorp/aws": "5.31.0",
        "registry.opentofu.org/hashicorp/random": "3.6.0",
    }
