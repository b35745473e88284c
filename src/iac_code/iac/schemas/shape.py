"""One type's schema block (as `providers schema -json` writes it) as the tool's rawOutput: attributes and
nested blocks as lists, with cty types written the way a configuration writes type constraints."""

from __future__ import annotations

from typing import Any

# cty's primitive names as a configuration spells them
_PRIMITIVES = {"string": "string", "number": "number", "bool": "bool", "dynamic": "any"}
# nesting modes of nested attribute types (protocol 6) written as the collection that holds the objects
_NESTED_COLLECTIONS = {"list": "list", "set": "set", "map": "map"}


def type_schema(provider: str, version: str | None, kind: str, name: str, block: dict[str, Any]) -> dict[str, Any]:
    """The rawOutput of one resource or data source type."""
    return {
        "provider": provider,
        "version": version,
        "kind": kind,
        "type": name,
        "description": _text(block.get("description")),
        "deprecated": bool(block.get("deprecated")),
        "attributes": attributes(block.get("attributes")),
        "blocks": blocks(block.get("block_types")),
    }


def attributes(entries: Any) -> list[dict[str, Any]]:
    if not isinstance(entries, dict):
        return []
    return [attribute(name, entry) for name, entry in sorted(entries.items()) if isinstance(entry, dict)]


def attribute(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "name": name,
        "type": type_expression(entry.get("type")),
        "required": bool(entry.get("required")),
        "optional": bool(entry.get("optional")),
        "computed": bool(entry.get("computed")),
        "sensitive": bool(entry.get("sensitive")),
        "deprecated": bool(entry.get("deprecated")),
        "description": _text(entry.get("description")),
    }
    nested = entry.get("nested_type")
    if isinstance(nested, dict):  # an attribute holding objects of its own attributes (protocol 6)
        mode = str(nested.get("nesting_mode") or "single")
        collection = _NESTED_COLLECTIONS.get(mode)
        shaped["type"] = f"{collection}(object)" if collection else "object"
        shaped["nesting"] = mode
        shaped["attributes"] = attributes(nested.get("attributes"))
    return shaped


def blocks(entries: Any) -> list[dict[str, Any]]:
    if not isinstance(entries, dict):
        return []
    shaped = []
    for name, entry in sorted(entries.items()):
        if not isinstance(entry, dict):
            continue
        inner = entry["block"] if isinstance(entry.get("block"), dict) else {}
        shaped.append(
            {
                "name": name,
                "nesting": str(entry.get("nesting_mode") or "single"),
                "minItems": _count(entry.get("min_items")) or 0,
                "maxItems": _count(entry.get("max_items")) or None,  # 0 and absent: no limit
                "description": _text(inner.get("description")),
                "deprecated": bool(inner.get("deprecated")),
                "attributes": attributes(inner.get("attributes")),
                "blocks": blocks(inner.get("block_types")),
            }
        )
    return shaped


def type_expression(cty: Any) -> str:
    """A cty type in JSON (`"string"`, `["list","string"]`, `["object",{…},["optional"]]`) as a type
    constraint (`list(string)`, `object({a = optional(string)})`); "" when absent."""
    if isinstance(cty, str):
        return _PRIMITIVES.get(cty, cty)
    if not isinstance(cty, list) or not cty:
        return ""
    head, *rest = cty
    if head in ("list", "set", "map") and rest:
        return f"{head}({type_expression(rest[0])})"
    if head == "tuple" and rest and isinstance(rest[0], list):
        return "tuple([" + ", ".join(type_expression(item) for item in rest[0]) + "])"
    if head == "object" and rest and isinstance(rest[0], dict):
        optional = set(rest[1]) if len(rest) > 1 and isinstance(rest[1], list) else set()
        fields = []
        for key, value in sorted(rest[0].items()):
            written = type_expression(value)
            fields.append(f"{key} = optional({written})" if key in optional else f"{key} = {written}")
        return "object({" + ", ".join(fields) + "})"
    return str(head)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
