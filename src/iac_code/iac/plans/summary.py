"""The plan contract, made from a `terraform show -json` document, and the text the model reads.

Only addresses, actions, reasons and attribute *paths* leave the document: no value from `before`, `after`
or `variables` is ever copied, so a sensitive value cannot reach a client, a log line or the store through
a plan. Where `before_sensitive`/`after_sensitive` mark a node, its path is reported when it changes but the
walk stops there (the keys of a sensitive map are not listed either).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

ACTIONS = ("create", "update", "delete", "replace", "forget", "move")
CHANGED_ATTRIBUTES_PER_RESOURCE = 50
TEXT_BUDGET = 8_000  # characters of resource lines in the model's text, then a count of those left out
# Destroys first, then replaces: what a reviewer must not miss.
TEXT_ORDER = ("delete", "replace", "forget", "update", "create", "move")
COUNT_WORDS = {
    "create": "to add",
    "update": "to change",
    "replace": "to replace",
    "delete": "to destroy",
    "forget": "to forget",
    "move": "to move",
}
VERBS = {
    "create": "create",
    "update": "update",
    "delete": "destroy",
    "replace": "replace",
    "forget": "forget",
    "move": "move",
}
REASONS = {
    "replace_because_tainted": "tainted",
    "replace_because_cannot_update": "cannot be updated in place",
    "replace_by_request": "replacement requested (-replace)",
    "replace_by_triggers": "replace_triggered_by",
    "delete_because_no_resource_config": "no longer in the configuration",
    "delete_because_no_module": "its module is no longer in the configuration",
    "delete_because_wrong_repetition": "count/for_each changed on its resource",
    "delete_because_count_index": "count index out of range",
    "delete_because_each_key": "for_each key no longer present",
    "delete_because_no_move_target": "moved to an address that is not in the configuration",
}


class PlanDocumentError(ValueError):
    """The document is not a plan as `terraform show -json` writes one."""


def plan_contract(
    document: Mapping[str, Any], *, tool: str, directory: str, plan_file: str, sha256: str, refresh_only: bool = False
) -> dict[str, Any]:
    """The contract (camelCase, JSON-ready) for one saved plan; see README.md. `drift` is there for a
    refresh-only plan, and for any plan that found objects changed outside terraform."""
    if not isinstance(document, Mapping) or "format_version" not in document:
        raise PlanDocumentError("not a plan document from `show -json` (no format_version)")
    resources = [entry for change in _list(document, "resource_changes") if (entry := resource_entry(change))]
    counts = dict.fromkeys(ACTIONS, 0)
    for entry in resources:
        counts[entry["action"]] += 1
    contract: dict[str, Any] = {
        "tool": tool,
        "directory": directory,
        "planFile": plan_file,
        "sha256": sha256,
        "counts": counts,
        "resources": resources,
        "outputs": _outputs(document),
    }
    if refresh_only or _list(document, "resource_drift"):
        contract["drift"] = [_drift(change) for change in _list(document, "resource_drift")]
    return contract


def resource_entry(change: Mapping[str, Any]) -> dict[str, Any] | None:
    """One `resources` entry, or None for what changes nothing (a no-op that is not a move, a read)."""
    detail = change.get("change") or {}
    actions = [str(a) for a in detail.get("actions") or []]
    previous = change.get("previous_address")
    action = contract_action(actions, moved=bool(previous))
    if action is None:
        return None
    return {
        "address": str(change.get("address", "")),
        "action": action,
        "actions": actions,
        "reason": change.get("action_reason"),
        "replacePaths": _paths(detail.get("replace_paths")),
        "previousAddress": previous,
        "changedAttributes": changed_attributes(detail) if action in ("create", "update", "replace") else [],
    }


def contract_action(actions: list[str], *, moved: bool) -> str | None:
    """terraform's action list → one contract action (a replace counts only as a replace)."""
    kinds = set(actions)
    if "create" in kinds and kinds & {"delete", "forget"}:
        return "replace"
    for single in ("create", "update", "delete", "forget"):
        if kinds == {single}:
            return single
    if kinds <= {"no-op"} and moved:
        return "move"
    if "update" in kinds:
        return "update"
    return None  # no-op, read (a data source), or an action this contract does not know


def changed_attributes(detail: Mapping[str, Any]) -> list[str]:
    """The paths whose value changes (or is known only after apply), values never copied; at most
    CHANGED_ATTRIBUTES_PER_RESOURCE of them."""
    before = detail.get("before") if isinstance(detail.get("before"), dict) else {}
    after = detail.get("after") if isinstance(detail.get("after"), dict) else {}
    walk = _differences(
        before,
        after,
        detail.get("after_unknown"),
        detail.get("before_sensitive"),
        detail.get("after_sensitive"),
        "",
    )
    found: list[str] = []
    for path in walk:
        found.append(path)
        if len(found) == CHANGED_ATTRIBUTES_PER_RESOURCE:
            break
    return found


def _differences(before: Any, after: Any, unknown: Any, before_s: Any, after_s: Any, path: str) -> Iterator[str]:
    if before_s is True or after_s is True:  # sensitive: say whether it changes, nothing below it
        if unknown is True or before != after:
            yield path
        return
    if unknown is True:
        yield path
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after) | _keys(unknown)):
            yield from _differences(
                before.get(key),
                after.get(key),
                _child(unknown, key),
                _child(before_s, key),
                _child(after_s, key),
                f"{path}.{key}" if path else str(key),
            )
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _differences(
                old, new, _child(unknown, index), _child(before_s, index), _child(after_s, index), f"{path}[{index}]"
            )
    elif before != after or _any_unknown(unknown):
        yield path


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, dict) and isinstance(key, str):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def _keys(node: Any) -> set[str]:
    return set(node) if isinstance(node, dict) else set()


def _any_unknown(node: Any) -> bool:
    if node is True:
        return True
    if isinstance(node, dict):
        return any(_any_unknown(v) for v in node.values())
    if isinstance(node, list):
        return any(_any_unknown(v) for v in node)
    return False


def _paths(value: Any) -> list[list[str | int]] | None:
    """replace_paths as terraform gives them (lists of attribute names and indexes), or None."""
    if not isinstance(value, list):
        return None
    return [[step for step in path if isinstance(step, str | int)] for path in value if isinstance(path, list)]


def _outputs(document: Mapping[str, Any]) -> list[dict[str, str]]:
    changes = document.get("output_changes")
    if not isinstance(changes, dict):
        return []
    outputs = []
    for name in sorted(changes):
        actions = (changes[name] or {}).get("actions") or []
        action = contract_action([str(a) for a in actions], moved=False)
        if action is not None:
            outputs.append({"name": str(name), "action": action})
    return outputs


def _drift(change: Mapping[str, Any]) -> dict[str, Any]:
    """What changed outside terraform: attribute paths for an object changed in place; none for one deleted."""
    detail = change.get("change") or {}
    updated = (detail.get("actions") or []) == ["update"]
    attributes = changed_attributes(detail) if updated else []
    return {"address": str(change.get("address", "")), "changedAttributes": attributes}


def _list(document: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = document.get(key)
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


# -- the model's text ---------------------------------------------------------------------------


def counts_line(counts: Mapping[str, int]) -> str:
    """e.g. "2 to add, 1 to change, 1 to replace, 1 to destroy" ("No changes." when nothing changes)."""
    order = ("create", "update", "replace", "delete", "forget", "move")
    parts = [f"{counts[action]} {COUNT_WORDS[action]}" for action in order if counts.get(action)]
    return ", ".join(parts) if parts else "No changes."


def reason_text(entry: Mapping[str, Any]) -> str:
    """Why terraform plans this action, in words (the replace paths named)."""
    words = ["removed from the state only, not destroyed"] if entry.get("action") == "forget" else []
    reason = entry.get("reason")
    if isinstance(reason, str):
        words.append(REASONS.get(reason, reason))
    if entry.get("replacePaths"):
        words.append("forced by " + ", ".join(_path_text(p) for p in entry["replacePaths"]))
    if entry.get("previousAddress"):
        words.append(f"from {entry['previousAddress']}")
    return "; ".join(words)


def summary_text(contract: Mapping[str, Any]) -> str:
    """The counts line, then one line per changed resource (destroys and replaces first) with its reason."""
    head = f"{contract['tool']} plan in {contract['directory']}: {counts_line(contract['counts'])}"
    lines = [head]
    ordered = sorted(contract["resources"], key=lambda entry: TEXT_ORDER.index(entry["action"]))
    used = len(head)
    for shown, entry in enumerate(ordered):
        line = _resource_line(entry)
        if used + len(line) + 1 > TEXT_BUDGET:
            lines.append(f"[{len(ordered) - shown} more changed resources not listed: see the plan's resources]")
            break
        lines.append(line)
        used += len(line) + 1
    if contract.get("outputs"):
        lines.append("Outputs: " + ", ".join(f"{o['name']} ({o['action']})" for o in contract["outputs"]))
    if "drift" in contract:
        lines.append(_drift_text(contract["drift"]))
    return "\n".join(lines)


def _resource_line(entry: Mapping[str, Any]) -> str:
    line = f"- {VERBS[entry['action']]} {entry['address']}"
    reason = reason_text(entry)
    if reason:
        line += f" ({reason})"
    if entry["action"] in ("update", "replace") and entry["changedAttributes"]:
        line += ": " + ", ".join(entry["changedAttributes"][:8])
        if len(entry["changedAttributes"]) > 8:
            line += ", …"
    return line


def _drift_text(drift: list[Mapping[str, Any]]) -> str:
    if not drift:
        return "Drift: none (the real infrastructure matches the state)."
    lines = [f"Drift: {len(drift)} resource{'s' if len(drift) != 1 else ''} changed outside terraform:"]
    for item in drift[:100]:
        attributes = ", ".join(item["changedAttributes"][:8]) or "deleted"
        lines.append(f"- {item['address']}: {attributes}")
    if len(drift) > 100:
        lines.append(f"[{len(drift) - 100} more]")
    return "\n".join(lines)


def _path_text(path: list[str | int]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text
