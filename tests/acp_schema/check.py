"""Every message the agent sends, checked against the official ACP v1 JSON schema (README.md says which copy).

Each e2e client that reads the agent's messages owns one `Conformance` per connection: it tells it what it
sent (`sent`, so that a response is checked against the result of the method it answers) and hands it every
message it received (`received`). A message is checked against the definition its method names:

- a request of the agent (`session/request_permission`, `fs/*`, `terminal/*`, `elicitation/create`): its
  params against the request definition of that method among the agent's requests (`AgentRequest`);
- a notification (`session/update`, `elicitation/complete`, `$/cancel_request`): its params likewise;
- a response: its result against the response definition of the method of the request it answers, or its
  error against `Error`; a response to an id this client never sent is checked against the whole
  `AgentResponse` union.

Extension methods (`_name`) are anything the schema's Ext* definitions allow (anything); `_meta` is allowed
where the schema allows it. A method the stable schema lacks is looked up in the unstable one of the same
package (`session/fork`, unstable upstream, which the agent keeps serving). A violation is recorded for the
running test (plugin.py fails it) and raised in the test's own thread by `raise_found()`, since
most clients read in a thread of their own where an exception would only end the reader.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, relevance

HERE = Path(__file__).parent
STABLE = "schema.json"
UNSTABLE = "schema.unstable.json"

# The seed's aliases (acp/router.py): the agent answers them exactly as the method they stand for.
ALIASES = {"sessions/list": "session/list", "config/set": "session/set_config_option"}
# `session/set_model` was removed from ACP (no schema has it any more) but editors still send it; the agent
# routes it (acp/router.py), so its result is checked as an extension method's result would be.
LEGACY = {"session/set_model"}

MESSAGE_CHARS = 800


class SchemaViolation(AssertionError):
    """An agent message the official schema rejects: which message, which definition, where and why."""


@dataclass(frozen=True)
class Definition:
    """Where a message's shape is defined: a `$defs` entry of one of the two schema files."""

    document: str
    name: str

    def __str__(self) -> str:
        return f"{self.document}#/$defs/{self.name}"


@dataclass(frozen=True)
class Methods:
    """The definitions one schema file gives the messages an agent sends, by method."""

    requests: dict[str, str]  # a request the agent sends → its params definition
    notifications: dict[str, str]
    responses: dict[str, str]  # a request the client sends → the definition of the agent's result


@functools.cache
def _document(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((HERE / name).read_text(encoding="utf-8"), object_hook=_dispatched)
    return document


def _dispatched(node: dict[str, Any]) -> dict[str, Any]:
    """A `oneOf` the schema marks with `discriminator: {propertyName: k}` (SessionUpdate, ContentBlock,
    ToolCallContent, ...), rewritten to dispatch on `k`: `k` is one of the branches' consts, and the branch whose
    const it is holds (`if`/`then`). As each branch requires its own `k` const, at most one branch of the
    `oneOf` can hold, so both say the same; but this one evaluates one branch instead of all of them (a
    session/update took 2.5 ms, most of a turn's check), and a violation is reported inside that branch
    instead of as "not valid under any of the given schemas"."""
    key = node.get("discriminator", {}).get("propertyName")
    branches = node.get("oneOf")
    if not isinstance(key, str) or not isinstance(branches, list):
        return node
    consts = [branch.get("properties", {}).get(key, {}).get("const") for branch in branches]
    if None in consts or any(key not in branch.get("required", []) for branch in branches):
        return node  # not a union the rewrite is sure to keep the meaning of
    dispatch = [{"type": "object", "required": [key], "properties": {key: {"enum": consts}}}]
    dispatch += [
        {"if": {"properties": {key: {"const": const}}, "required": [key]}, "then": branch}
        for const, branch in zip(consts, branches, strict=True)
    ]
    rewritten = {name: value for name, value in node.items() if name != "oneOf"}
    rewritten["allOf"] = [*node.get("allOf", []), *dispatch]
    return rewritten


def _refs(node: Any) -> Iterator[str]:
    """The `$defs` names a union refers to (depth-first; the unions nest `anyOf`s and `allOf`s)."""
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"].removeprefix("#/$defs/")
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _by_method(document: dict[str, Any], union: Any) -> dict[str, str]:
    defs = document["$defs"]
    return {defs[name]["x-method"]: name for name in _refs(union) if "x-method" in defs.get(name, {})}


@functools.cache
def methods(name: str) -> Methods:
    """What the agent may send, read from the schema's own unions: the top-level `Agent` message (requests,
    responses, notifications) and the `ProtocolLevel` one (`$/cancel_request`, which either side sends)."""
    document = _document(name)
    defs = document["$defs"]
    protocol = next(branch for branch in document["anyOf"] if branch.get("title") == "ProtocolLevel")
    result_union = next(branch for branch in defs["AgentResponse"]["anyOf"] if "result" in branch["properties"])
    return Methods(
        requests=_by_method(document, defs["AgentRequest"]["properties"]["params"]),
        notifications={
            **_by_method(document, defs["AgentNotification"]["properties"]["params"]),
            **_by_method(document, protocol["properties"]["params"]),
        },
        responses=_by_method(document, result_union["properties"]["result"]),
    )


def _envelope(required: list[str], members: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["jsonrpc", *required],
        "properties": {"jsonrpc": {"const": "2.0"}, **members},
    }


_ID = {"$ref": "#/$defs/RequestId"}
_SHAPES: dict[str, Any] = {
    # The official unions require only `id` and `method`; params are required where the method's definition has
    # required members (every ACP method; not the Ext* ones, which take anything or nothing).
    "request": lambda ref, params: _envelope(["id", "method", *params], {"id": _ID, "params": ref}),
    "notification": lambda ref, params: _envelope(["method", *params], {"params": ref}),
    "result": lambda ref, _: {
        **_envelope(["id", "result"], {"id": _ID, "result": ref}),
        "not": {"required": ["error"]},
    },
    "error": lambda ref, _: {**_envelope(["id", "error"], {"id": _ID, "error": ref}), "not": {"required": ["result"]}},
    # The whole union, for a response this client cannot place (it never sent that id).
    "response": lambda ref, _: {"allOf": [_envelope(["id"], {}), ref]},
}


# The schema's integer formats, which the TypeScript SDK's zod schemas enforce as ranges (`.int().gte(0).max(...)`):
# an editor rejects a negative line number or a token count beyond them, so the check does too. ("double" is any
# JSON number; "uri", on one field of URL elicitations, is left unchecked: the standard check needs rfc3987.)
_INTEGER_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
FORMATS = FormatChecker(formats=())


def _in_range(name: str, low: int, high: int) -> None:
    @FORMATS.checks(name)
    def within(value: object) -> bool:
        return not isinstance(value, int) or isinstance(value, bool) or low <= value <= high


for _name, (_low, _high) in _INTEGER_RANGES.items():
    _in_range(_name, _low, _high)


@functools.cache
def validator(kind: str, definition: Definition) -> Draft202012Validator:
    """One compiled validator per (message kind, definition), built once per test process: the suite reads
    tens of thousands of messages."""
    document = _document(definition.document)
    required = document["$defs"][definition.name].get("required")
    schema = {
        "$schema": document["$schema"],
        **_SHAPES[kind]({"$ref": f"#/$defs/{definition.name}"}, ["params"] if required else []),
        "$defs": document["$defs"],
    }
    return Draft202012Validator(schema, format_checker=FORMATS)


def _locate(kind: str, method: str | None) -> tuple[Definition | None, str]:
    """The definition a message of `kind` for `method` must satisfy, or None and why there is none."""
    if method is not None and method.startswith("_"):
        extension = {"request": "ExtRequest", "notification": "ExtNotification", "result": "ExtResponse"}[kind]
        return Definition(STABLE, extension), ""
    if kind == "result" and method in LEGACY:
        return Definition(STABLE, "ExtResponse"), ""
    method = ALIASES.get(method, method) if kind == "result" and method is not None else method
    for document in (STABLE, UNSTABLE):
        table = {"request": methods(document).requests, "notification": methods(document).notifications}.get(
            kind, methods(document).responses
        )
        if method in table:
            return Definition(document, table[method]), ""
    side = "the client's requests" if kind == "result" else f"the agent's {kind}s"
    return None, f"{method!r} is not among {side} in {STABLE} or {UNSTABLE}, nor an extension method (_name)"


def problems(message: Any, answering: str | None = None) -> list[str]:
    """Why `message` (from the agent) violates the schema; empty when it conforms. `answering`: the method of
    the request a response answers, when the client knows it."""
    if not isinstance(message, dict):
        return [f"not a JSON-RPC message object: {type(message).__name__}"]
    method = message.get("method")
    if isinstance(method, str):
        kind = "request" if "id" in message else "notification"
        definition, missing = _locate(kind, method)
        what = f"{method} {kind}"
    elif "error" in message:
        kind, definition, missing, what = "error", Definition(STABLE, "Error"), "", "error response"
    elif answering is None:
        kind, definition, missing, what = "response", Definition(STABLE, "AgentResponse"), "", "response"
    else:
        kind, what = "result", f"response to {answering}"
        definition, missing = _locate(kind, answering)
    if definition is None:
        return [f"{what}: {missing}"]
    errors = list(validator(kind, definition).iter_errors(message))
    if not errors:
        return []
    return [f"{what} violates {definition} {_describe(max(errors, key=relevance))}"]


def _describe(error: ValidationError) -> str:
    """Where and why, for a person: inside a union (anyOf/oneOf), the branch that got furthest into the
    message; where none got past the value itself, the values the union allows."""
    deeper = [cause for cause in error.context if len(cause.absolute_path) > len(error.absolute_path)]
    if deeper:
        return _describe(max(deeper, key=lambda cause: len(cause.absolute_path)))
    if error.context:
        allowed = ", ".join(dict.fromkeys(_alternatives(error)))
        reason = f"{_short(error.instance)} is none of: {allowed}"
    else:
        reason = error.message
    return f"at {_path(error)}: {reason[:MESSAGE_CHARS]}"


def _alternatives(error: ValidationError) -> Iterator[str]:
    for cause in error.context:
        if cause.context:
            yield from _alternatives(cause)
        elif cause.validator == "const":
            yield json.dumps(cause.validator_value)
        elif cause.validator == "type":
            yield "null" if cause.validator_value == "null" else f"any {cause.validator_value}"
        else:
            yield cause.message


def _path(error: ValidationError) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path) or "."


def _short(message: Any) -> str:
    text = json.dumps(message, ensure_ascii=False, default=str)
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + f"… ({len(text)} characters)"


_found: list[SchemaViolation] = []
_found_lock = threading.Lock()


def take_found() -> list[SchemaViolation]:
    """The violations found since the last call, forgotten now (plugin.py fails the test with them)."""
    with _found_lock:
        found = list(_found)
        _found.clear()
    return found


def raise_found() -> None:
    """Raise the first violation found, in the calling (the test's) thread; it stays recorded, so that a test
    that swallows it still fails."""
    with _found_lock:
        first = _found[0] if _found else None
    if first is not None:
        raise first


def fail_if_found() -> None:
    """Raise all the violations found and not yet taken, as one."""
    found = take_found()
    if found:
        raise SchemaViolation(f"{len(found)} agent message(s) violate the ACP schema:\n" + "\n".join(map(str, found)))


class Conformance:
    """One connection's check: which method each id the client sent asked for, and every agent message."""

    def __init__(self, who: str) -> None:
        self.who = who
        self._asked: dict[Any, deque[str]] = {}
        self._lock = threading.Lock()

    def sent(self, message: Any) -> None:
        """A message the client sent (a dict, or the raw JSON text): remembers the methods of its requests."""
        if isinstance(message, str | bytes):
            try:
                message = json.loads(message)
            except (ValueError, RecursionError):
                return  # the agent answers what is not JSON with an error, which needs no method
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and isinstance(item.get("method"), str) and _hashable(item.get("id")):
                with self._lock:
                    self._asked.setdefault(item["id"], deque()).append(item["method"])

    def observe(self, event: StreamEvent) -> None:
        """The observer of an SDK connection (`observers=[conformance.observe]`), which sees both directions."""
        if event.direction is StreamDirection.OUTGOING:
            self.sent(event.message)
        else:
            self.received(event.message)

    def received(self, message: Any) -> SchemaViolation | None:
        """Checks one message from the agent; a violation is recorded for the test and returned."""
        answering = None
        if isinstance(message, dict) and "method" not in message and _hashable(message.get("id")):
            with self._lock:
                asked = self._asked.get(message["id"])
                answering = asked.popleft() if asked else None
        found = problems(message, answering)
        if not found:
            return None
        violation = SchemaViolation(f"{self.who}: {'; '.join(found)}\n  message: {_short(message)}")
        with _found_lock:
            _found.append(violation)
        return violation


def _hashable(request_id: Any) -> bool:
    return isinstance(request_id, str | int) and not isinstance(request_id, bool)


def check_transcript(who: str, messages: list[Any], asked: dict[Any, str]) -> None:
    """Messages read whole after the fact (the SSE output a curl script saved), `asked` being the id → method
    of the requests that were sent; raises their violations at once."""
    conformance = Conformance(who)
    for request_id, method in asked.items():
        conformance.sent({"id": request_id, "method": method})
    for message in messages:
        conformance.received(message)
    fail_if_found()
