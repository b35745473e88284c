"""YAML (and JSON) read as a node tree that keeps line numbers, accepting CloudFormation/ROS short tags.

`!Ref Foo`, `!GetAtt A.B`, `!Sub ...` are legal in templates but unknown to a plain YAML loader; here
any `!Tag` is read as `{"Fn::Tag": value}` / `{"Ref": value}` nodes, which is how the long form reads.

Aliases are bounded. A node tree shares an anchored node with every alias of it, so composing is cheap,
but whatever walks the tree (the ROS checks, checkov, cfn-lint, a JSON dump) visits it once per alias:
ten nested lists of ten aliases in 730 bytes are 10^10 nodes to walk. So the loader counts, as it
composes, how many nodes the aliases stand for (an anchored node's size includes the aliases inside it)
and stops past MAX_ALIAS_NODES; an alias inside the node it names (a cycle) is refused too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

# Real templates alias a few shared blocks (tags, environment lists): hundreds of nodes. A walk over
# 100,000 more costs the ROS checks ~0.1 s and checkov tens of MB; past that it is a bomb, not a template.
MAX_ALIAS_NODES = 100_000


class AliasLimitError(ComposerError):
    """The aliases of a document stand for too many nodes, or for a node that contains them."""


class TemplateLoader(yaml.SafeLoader):
    """A safe loader that composes nodes only; unknown tags are kept on the nodes, not rejected.
    Aliases may stand for MAX_ALIAS_NODES nodes in all (AliasLimitError past that)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._composed = 0  # nodes so far, each alias counted as the size of the node it names
        self._aliased = 0  # the part of `_composed` that aliases stand for
        self._sizes: dict[int, int] = {}  # id(anchored node) -> its size, once it is composed

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            self._count_alias()
            return super().compose_node(parent, index)
        anchor = self.peek_event().anchor  # type: ignore[no-untyped-call]
        before = self._composed
        node = super().compose_node(parent, index)
        self._composed += 1
        if anchor is not None:
            self._sizes[id(node)] = self._composed - before
        return node

    def compose_document(self) -> Node | None:
        self._sizes = {}  # anchors are per document (the base class forgets them after each)
        return super().compose_document()

    def _count_alias(self) -> None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        node = self.anchors.get(event.anchor)
        if node is None:
            return  # undefined: the base class reports it
        size = self._sizes.get(id(node))
        if size is None:
            message = f"YAML alias *{event.anchor} is inside the node it names"
            raise AliasLimitError(None, None, message, event.start_mark)
        self._composed += size
        self._aliased += size
        if self._aliased > MAX_ALIAS_NODES:
            message = f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes"
            raise AliasLimitError(None, None, message, event.start_mark)


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
    except AliasLimitError as exc:
        raise StructuredSyntaxError("yaml-aliases", error_line(exc), str(exc.problem)) from None
    except yaml.YAMLError as exc:
        raise StructuredSyntaxError("yaml-syntax", error_line(exc), f"invalid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem and context:
        return f"{problem} ({context})"
    return str(problem or context or exc).splitlines()[0]
