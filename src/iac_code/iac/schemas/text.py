"""The compact text the model reads for one type's schema (shape.type_schema's rawOutput).

One line per attribute: `name: type, required|optional|optional, computed|computed[, sensitive][, deprecated]
— description`, required ones first, then optional, then those only the provider sets; nested blocks and
nested attribute types indented under their name. Descriptions are cut to their first line; when the whole
text would not fit, they are left out, and past that the tail is cut with a count.
"""

from __future__ import annotations

from typing import Any

MAX_CHARS = 30_000  # what one tool result may put into the model's context
DESCRIPTION_CHARS = 200
INDENT = "  "


def schema_text(schema: dict[str, Any], limit: int = MAX_CHARS) -> str:
    text = _render(schema, descriptions=True)
    if len(text) <= limit:
        return text
    text = _render(schema, descriptions=False) + "(descriptions left out to fit)\n"
    if len(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    kept, size = [], 0
    for line in lines:
        if size + len(line) > limit - 80:
            break
        kept.append(line)
        size += len(line)
    return "".join(kept) + f"… {len(lines) - len(kept)} more lines left out\n"


def _render(schema: dict[str, Any], *, descriptions: bool) -> str:
    version = schema["version"] or "version unknown"
    head = f'{schema["kind"]} "{schema["type"]}": {schema["provider"]} {version}'
    if schema["deprecated"]:
        head += " (deprecated)"
    lines = [head]
    if descriptions and schema["description"]:
        lines.append(_first_line(schema["description"]))
    if schema["attributes"]:
        lines.append("attributes:")
        lines += _attribute_lines(schema["attributes"], 1, descriptions)
    if schema["blocks"]:
        lines.append("blocks:")
        lines += _block_lines(schema["blocks"], 1, descriptions)
    return "\n".join(lines) + "\n"


def _attribute_lines(attributes: list[dict[str, Any]], depth: int, descriptions: bool) -> list[str]:
    lines = []
    for entry in sorted(attributes, key=_presence_rank):
        flags = [_presence(entry)] + [flag for flag in ("sensitive", "deprecated") if entry[flag]]
        line = f"{INDENT * depth}{entry['name']}: {entry['type'] or 'any'}, {', '.join(flags)}"
        if descriptions and entry["description"]:
            line += f" — {_first_line(entry['description'])}"
        lines.append(line)
        lines += _attribute_lines(entry.get("attributes") or [], depth + 1, descriptions)
    return lines


def _block_lines(blocks: list[dict[str, Any]], depth: int, descriptions: bool) -> list[str]:
    lines = []
    for block in blocks:
        line = f"{INDENT * depth}{block['name']} ({_cardinality(block)})"
        if block["deprecated"]:
            line += ", deprecated"
        if descriptions and block["description"]:
            line += f" — {_first_line(block['description'])}"
        lines.append(line + ":" if block["attributes"] or block["blocks"] else line)
        lines += _attribute_lines(block["attributes"], depth + 1, descriptions)
        lines += _block_lines(block["blocks"], depth + 1, descriptions)
    return lines


def _presence(entry: dict[str, Any]) -> str:
    if entry["required"]:
        return "required"
    if entry["optional"]:
        return "optional, computed" if entry["computed"] else "optional"
    return "computed" if entry["computed"] else "optional"


def _presence_rank(entry: dict[str, Any]) -> int:
    return 0 if entry["required"] else (1 if entry["optional"] or not entry["computed"] else 2)


def _cardinality(block: dict[str, Any]) -> str:
    words = [block["nesting"]]
    if block["minItems"]:
        words.append(f"min {block['minItems']}")
    if block["maxItems"]:
        words.append(f"max {block['maxItems']}")
    return ", ".join(words)


def _first_line(description: str) -> str:
    line = description.strip().splitlines()[0].strip() if description.strip() else ""
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1].rstrip() + "…"
