"""A `providers schema -json` document cut into one row per resource and data source type (store.py)."""

from __future__ import annotations

import json
from typing import Any

from iac_code.iac.schemas.store import TypeRow

BUILTIN = "terraform.io/builtin/terraform"  # compiled into the binary: no lock entry, the binary's version
SECTIONS = (("resource", "resource_schemas"), ("data", "data_source_schemas"))


class DocumentError(ValueError):
    """Not a schema document."""


def document_rows(
    document: bytes, pinned: dict[str, str], binary_version: str
) -> tuple[dict[str, str | None], list[TypeRow]]:
    """(provider address → version, the rows). Versions come from the lock file (`pinned`), the built-in
    provider's from the binary. When two providers define one type name, the one whose own name is the
    type's prefix wins (`aws_instance` → `…/aws`), as terraform's default provider for a type does."""
    try:
        parsed = json.loads(document)
    except ValueError as exc:
        raise DocumentError(f"not JSON ({exc})") from None
    schemas = parsed.get("provider_schemas") if isinstance(parsed, dict) else None
    if "format_version" not in (parsed if isinstance(parsed, dict) else {}) or not isinstance(schemas or {}, dict):
        raise DocumentError("no format_version and provider_schemas")
    providers: dict[str, str | None] = {}
    rows: dict[tuple[str, str], TypeRow] = {}
    for address, provider in sorted((schemas or {}).items()):
        providers[address] = binary_version if address == BUILTIN else pinned.get(address)
        for kind, section in SECTIONS:
            entries = provider.get(section) if isinstance(provider, dict) else None
            for name, entry in (entries or {}).items():
                block = entry.get("block") if isinstance(entry, dict) else None
                held = rows.get((kind, name))
                if held is None or (not _owns(held.provider, name) and _owns(address, name)):
                    block_json = _compact(block if isinstance(block, dict) else {})
                    rows[(kind, name)] = TypeRow(kind, name, address, block_json)
    return providers, list(rows.values())


def _owns(address: str, type_name: str) -> bool:
    return type_name.split("_", 1)[0] == address.rsplit("/", 1)[-1]


def _compact(block: dict[str, Any]) -> str:
    return json.dumps(block, separators=(",", ":"), ensure_ascii=False)
