"""YAML (and JSON) read as a node tree that keeps line numbers, accepting CloudFormation/ROS short tags.

`!Ref Foo`, `!GetAtt A.B`, `!Sub ...` are legal in templates but unknown to a plain YAML loader; here
any `!Tag` is read as `{"Fn::Tag": value}` / `{"Ref": value}` nodes, which is how the long form reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


class TemplateLoader(yaml.SafeLoader):
    """A safe loader that composes nodes only; unknown tags are kept on the nodes, not rejected."""


def compose_documents(text: str) -> list[Node]:
    """Every document of `text` as a node tree (raises yaml.YAMLError with a mark on bad syntax)."""
    return [node for node in yaml.compose_all(text, Loader=TemplateLoader) if node is not None]


def compose_json(text: str) -> Node | None:
    """A JSON text as a node tree (for its line numbers; check its syntax with the json module first).

    JSON is YAML, except that YAML forbids tabs where JSON allows them as whitespace: in valid JSON a
    literal tab can only be whitespace, so tabs become spaces before composing.
    """
    return yaml.compose(text.replace("\t", " "), Loader=TemplateLoader)


def line_of(node: Node) -> int:
    return int(node.start_mark.line) + 1


def error_line(exc: yaml.YAMLError) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return None if mark is None else int(mark.line) + 1


def mapping_items(node: Node | None) -> Iterator[tuple[str, ScalarNode, Node]]:
    """(key text, key node, value node) of a mapping node; nothing for other nodes."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield str(key.value), key, value


def mapping_get(node: Node | None, name: str) -> Node | None:
    for key, _, value in mapping_items(node):
        if key == name:
            return value
    return None


def scalar(node: Node | None) -> str | None:
    return str(node.value) if isinstance(node, ScalarNode) else None


def short_function(node: Node) -> str | None:
    """For a node written with a short tag (`!Ref`, `!GetAtt`...), the long name (`Ref`, `Fn::GetAtt`)."""
    tag = str(node.tag)
    if not tag.startswith("!") or tag.startswith("!!"):
        return None
    name = tag[1:]
    return "Ref" if name == "Ref" else f"Fn::{name}"


def walk(node: Node) -> Iterator[Node]:
    """Every node under `node`, itself included, depth first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, MappingNode):
            for key, value in reversed(current.value):
                stack.extend((value, key))
        elif isinstance(current, SequenceNode):
            stack.extend(reversed(current.value))


class StructuredSyntaxError(Exception):
    def __init__(self, rule: str, line: int | None, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.line = line
        self.message = message


def is_json(name: str, text: str) -> bool:
    """JSON by name, or a `.template` whose first character opens an object."""
    return name.lower().endswith(".json") or (not name.lower().endswith((".yaml", ".yml")) and text.lstrip()[:1] == "{")


def parse_structured(name: str, text: str) -> list[Node]:
    """The documents of a YAML or JSON file as node trees, or StructuredSyntaxError with the line."""
    if is_json(name, text):
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise StructuredSyntaxError("json-syntax", exc.lineno, f"invalid JSON: {exc.msg}") from None
        node = compose_json(text)
        return [] if node is None else [node]
    try:
        return compose_documents(text)
    except yaml.YAMLError as exc:
        raise StructuredSyntaxError("yaml-syntax", error_line(exc), f"invalid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem and context:
        return f"{problem} ({context})"
    return str(problem or context or exc).splitlines()[0]
