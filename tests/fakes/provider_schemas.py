"""A big provider's schema document, generated (never committed), and a fake `terraform` that serves it.

`write_large_schema(path)` writes a `providers schema -json` document of about 50 MB: PROVIDER defines
`huge_thing_NNNN` resource types and `huge_lookup_NNNN` data sources, each with many attributes of every
kind of type and nested blocks two levels deep. `fake_terraform(bin_dir, document, runs)` writes a
`terraform` script that prints that document for `providers schema -json` run in a directory with a lock file
(the built-in provider's small one elsewhere), a version for `version -json`, and appends one line per
schema run to `runs`, so a test can count them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROVIDER = "registry.terraform.io/example/huge"
PINNED = "9.9.9"
BINARY_VERSION = "1.9.0"
LOCK_FILE = f'provider "{PROVIDER}" {{\n  version     = "{PINNED}"\n  constraints = "~> 9.0"\n  hashes = [\n    "h1:fake=",\n  ]\n}}\n'
MAIN_TF = 'terraform {\n  required_providers {\n    huge = { source = "example/huge" }\n  }\n}\n'
TYPES = ["string", "number", "bool", ["list", "string"], ["map", "string"], ["set", "number"], "dynamic"]
BUILTIN_DOCUMENT = {
    "format_version": "1.0",
    "provider_schemas": {
        "terraform.io/builtin/terraform": {
            "resource_schemas": {
                "terraform_data": {"block": {"attributes": {"input": {"type": "dynamic", "optional": True}}}}
            },
        }
    },
}

SCRIPT = """#!/bin/sh
case "$1 $2" in
  "version -json") echo '{{"terraform_version": "{version}", "platform": "linux_amd64"}}' ;;
  "providers schema")
    if [ -f .terraform.lock.hcl ]; then echo "$PWD" >> '{runs}'; exec cat '{document}'; fi
    echo '{builtin}' ;;
  *) echo "fake terraform: $*" >&2; exit 1 ;;
esac
"""


def write_large_schema(path: Path, resources: int = 1_400, data_sources: int = 450) -> Path:
    """About 50 MB with the defaults (~27 kB per type)."""
    document = {
        "format_version": "1.0",
        "provider_schemas": {
            PROVIDER: {
                "provider": {"version": 0, "block": {"attributes": {"region": _attribute(0, "optional")}}},
                "resource_schemas": {f"huge_thing_{n:04d}": _type(n) for n in range(resources)},
                "data_source_schemas": {f"huge_lookup_{n:04d}": _type(n) for n in range(data_sources)},
            }
        },
    }
    path.write_text(json.dumps(document))
    return path


def fake_terraform(bin_dir: Path, document: Path, runs: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "terraform"
    builtin = json.dumps(BUILTIN_DOCUMENT)
    script.write_text(SCRIPT.format(version=BINARY_VERSION, runs=runs, document=document, builtin=builtin))
    script.chmod(0o755)
    return script


def initialized_module(directory: Path) -> Path:
    """A module that requires the huge provider, as `terraform init` would leave it (lock file, .terraform/)."""
    (directory / ".terraform").mkdir(parents=True)
    (directory / "main.tf").write_text(MAIN_TF)
    (directory / ".terraform.lock.hcl").write_text(LOCK_FILE)
    return directory


def _type(n: int) -> dict[str, Any]:
    return {"version": 1, "block": _block(n, attributes=60, depth=2)}


def _block(n: int, attributes: int, depth: int) -> dict[str, Any]:
    presence = ("required", "optional", "computed", "optional")
    block: dict[str, Any] = {
        "attributes": {f"attr_{i:02d}": _attribute(n + i, presence[i % 4]) for i in range(attributes)},
        "description": f"Type number {n}: generated for the provider_schema tests.",
        "description_kind": "plain",
    }
    if depth:
        block["block_types"] = {
            f"nested_{j}": {
                "nesting_mode": ("list", "set", "single")[j % 3],
                "block": _block(n + j, attributes // 4, depth - 1),
                "max_items": 1 if j == 2 else 0,
                "min_items": 1 if j == 0 else 0,
            }
            for j in range(3)
        }
    return block


def _attribute(n: int, presence: str) -> dict[str, Any]:
    attribute: dict[str, Any] = {
        "type": TYPES[n % len(TYPES)],
        "description": f"Attribute {n} of a generated type; it says what the value means and how it is used.",
        "description_kind": "plain",
        presence: True,
    }
    if n % 11 == 0:
        attribute["sensitive"] = True
    if n % 17 == 0:
        attribute["deprecated"] = True
    return attribute
