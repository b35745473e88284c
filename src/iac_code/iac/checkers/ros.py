"""Offline structural validation of Alibaba Cloud ROS templates, with lines.

What the ROS service would reject before creating anything: unknown sections, a wrong format version,
resources without a type or with a type that does not exist (from a bundled list of ROS resource types),
and references (`Ref`, `Fn::GetAtt`, `Fn::Sub`, `Fn::FindInMap`, `DependsOn`, `Condition`) to names the
template does not define. Resource properties are not checked: that needs each type's schema.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from iac_code.iac.checkers.base import FileByFileChecker
from iac_code.iac.classify import FileKind
from iac_code.iac.findings import Finding, Severity
from iac_code.iac.sources import SourceFile
from iac_code.iac.yamlnodes import (
    StructuredSyntaxError,
    line_of,
    mapping_get,
    mapping_items,
    parse_structured,
    scalar,
    short_function,
    walk,
)

FORMAT_VERSION = "2015-09-01"
SECTIONS = (
    "ROSTemplateFormatVersion",
    "Transform",
    "Description",
    "Metadata",
    "Parameters",
    "Mappings",
    "Conditions",
    "Rules",
    "Locals",
    "Resources",
    "Outputs",
    "Workspace",
)
PARAMETER_TYPES = frozenset({"String", "Number", "CommaDelimitedList", "Json", "Boolean"})
_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")
_TYPE_SHAPE = re.compile(r"^(ALIYUN|DATASOURCE|MODULE)::\w+::\w+$|^Custom::\w+$")


@functools.cache
def known_resource_types() -> frozenset[str]:
    text = resources.files("iac_code.iac").joinpath("data/ros_resource_types.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@dataclass
class _Names:
    parameters: set[str] = field(default_factory=set)
    resources: set[str] = field(default_factory=set)
    conditions: set[str] = field(default_factory=set)
    mappings: set[str] = field(default_factory=set)
    locals: set[str] = field(default_factory=set)

    def referable(self, name: str) -> bool:
        return name in self.parameters or name in self.resources or name in self.locals or name.startswith("ALIYUN::")


class RosChecker(FileByFileChecker):
    name = "ros"
    summary = "Alibaba Cloud ROS templates: sections, resource types, Ref/GetAtt/Sub targets (offline)"
    kinds = frozenset({FileKind.ROS})
    revision = "1"

    def check_file(self, source: SourceFile, text: str) -> list[Finding]:
        try:
            documents = parse_structured(source.rel, text)
        except StructuredSyntaxError:
            return []  # the syntax check reports it
        if not documents:
            return []
        return list(_Template(self.name, source.rel, documents[0]).findings())


class _Template:
    def __init__(self, tool: str, rel: str, root: Node) -> None:
        self.tool = tool
        self.rel = rel
        self.root = root
        self.names = _Names()

    def findings(self) -> Iterator[Finding]:
        if not isinstance(self.root, MappingNode):
            yield self._finding("template-shape", "error", self.root, "a ROS template must be a mapping of sections")
            return
        yield from self._sections()
        self._collect_names()
        yield from self._parameters()
        yield from self._resources()
        yield from self._outputs()
        yield from self._references()

    def _finding(self, rule: str, severity: Severity, node: Node, message: str) -> Finding:
        return Finding(self.tool, rule, severity, self.rel, line_of(node), message)

    def _sections(self) -> Iterator[Finding]:
        for key, key_node, value in mapping_items(self.root):
            if key not in SECTIONS:
                hint = _did_you_mean(key, SECTIONS)
                yield self._finding("unknown-section", "error", key_node, f"unknown template section {key!r}{hint}")
            elif key == "ROSTemplateFormatVersion" and scalar(value) != FORMAT_VERSION:
                yield self._finding(
                    "format-version", "error", value, f"ROSTemplateFormatVersion must be '{FORMAT_VERSION}'"
                )
        if mapping_get(self.root, "Resources") is None and mapping_get(self.root, "Workspace") is None:
            yield self._finding("missing-resources", "error", self.root, "the template has no Resources section")

    def _collect_names(self) -> None:
        sections = {
            "Parameters": self.names.parameters,
            "Resources": self.names.resources,
            "Conditions": self.names.conditions,
            "Mappings": self.names.mappings,
            "Locals": self.names.locals,
        }
        for section, names in sections.items():
            node = mapping_get(self.root, section)
            if node is not None:
                names.update(key for key, _, _ in mapping_items(node))

    def _parameters(self) -> Iterator[Finding]:
        for name, key_node, body in mapping_items(mapping_get(self.root, "Parameters")):
            kind = scalar(mapping_get(body, "Type"))
            if kind is None:
                yield self._finding("parameter-type", "error", key_node, f"parameter {name!r} has no Type")
            elif kind not in PARAMETER_TYPES and not kind.startswith("ALIYUN::"):
                message = f"parameter {name!r} has an unknown Type {kind!r}{_did_you_mean(kind, PARAMETER_TYPES)}"
                yield self._finding("parameter-type", "warning", key_node, message)

    def _resources(self) -> Iterator[Finding]:
        section = mapping_get(self.root, "Resources")
        if section is None:
            return
        for name, key_node, body in mapping_items(section):
            type_node = mapping_get(body, "Type")
            kind = scalar(type_node)
            if type_node is None or kind is None:
                yield self._finding("missing-type", "error", key_node, f"resource {name!r} has no Type")
            else:
                yield from self._resource_type(name, kind, type_node)
            yield from self._resource_links(name, body)

    def _resource_type(self, name: str, kind: str, node: Node) -> Iterator[Finding]:
        known = known_resource_types()
        if kind in known or kind.startswith(("DATASOURCE::", "MODULE::", "Custom::")):
            return
        hint = _did_you_mean(kind, known)
        if hint or not _TYPE_SHAPE.match(kind):
            yield self._finding(
                "unknown-resource-type", "error", node, f"resource {name!r}: unknown type {kind!r}{hint}"
            )
        else:
            message = f"resource {name!r}: type {kind!r} is not in the bundled list of ROS types (new or misspelt?)"
            yield self._finding("unknown-resource-type", "warning", node, message)

    def _resource_links(self, name: str, body: Node) -> Iterator[Finding]:
        depends = mapping_get(body, "DependsOn")
        targets = [depends] if isinstance(depends, ScalarNode) else list(getattr(depends, "value", []) or [])
        for target in targets:
            value = scalar(target)
            if value is not None and value not in self.names.resources:
                yield self._finding(
                    "dangling-depends-on", "error", target, f"resource {name!r} depends on unknown resource {value!r}"
                )
        yield from self._condition_use(mapping_get(body, "Condition"), f"resource {name!r}")

    def _outputs(self) -> Iterator[Finding]:
        for name, key_node, body in mapping_items(mapping_get(self.root, "Outputs")):
            if mapping_get(body, "Value") is None:
                yield self._finding("output-value", "error", key_node, f"output {name!r} has no Value")
            yield from self._condition_use(mapping_get(body, "Condition"), f"output {name!r}")

    def _condition_use(self, node: Node | None, owner: str) -> Iterator[Finding]:
        value = scalar(node)
        if node is not None and value is not None and value not in self.names.conditions:
            yield self._finding("unknown-condition", "error", node, f"{owner} uses undefined condition {value!r}")

    def _references(self) -> Iterator[Finding]:
        for node in walk(self.root):
            function = short_function(node)
            if function is not None:
                yield from self._function(function, node, node)
                continue
            if isinstance(node, MappingNode) and len(node.value) == 1:
                key, value = node.value[0]
                if isinstance(key, ScalarNode):
                    yield from self._function(str(key.value), value, key)

    def _function(self, function: str, argument: Node, where: Node) -> Iterator[Finding]:
        if function == "Ref":
            target = scalar(argument)
            if target is not None and not self.names.referable(target):
                yield self._finding(
                    "dangling-ref", "error", where, f"Ref to undefined parameter or resource {target!r}"
                )
        elif function == "Fn::GetAtt":
            resource = _getatt_resource(argument)
            if resource is not None and resource not in self.names.resources:
                yield self._finding("dangling-getatt", "error", where, f"Fn::GetAtt on undefined resource {resource!r}")
        elif function == "Fn::Sub":
            yield from self._sub(argument, where)
        elif function == "Fn::FindInMap" and isinstance(argument, SequenceNode) and argument.value:
            mapping = scalar(argument.value[0])
            if mapping is not None and mapping not in self.names.mappings:
                yield self._finding(
                    "dangling-mapping", "error", where, f"Fn::FindInMap on undefined mapping {mapping!r}"
                )

    def _sub(self, argument: Node, where: Node) -> Iterator[Finding]:
        template, local = argument, set[str]()
        if isinstance(argument, SequenceNode) and argument.value:
            template = argument.value[0]
            if len(argument.value) > 1:
                local = {key for key, _, _ in mapping_items(argument.value[1])}
        text = scalar(template)
        for variable in _SUB_VARIABLE.findall(text or ""):
            name = variable.split(".", 1)[0].strip()
            if name not in local and not self.names.referable(name):
                yield self._finding("dangling-ref", "error", where, f"Fn::Sub uses undefined name {name!r}")


def _getatt_resource(argument: Node) -> str | None:
    if isinstance(argument, SequenceNode) and argument.value:
        return scalar(argument.value[0])
    text = scalar(argument)
    return None if text is None else text.split(".", 1)[0]


def _did_you_mean(word: str, choices: frozenset[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.85)
    return f" (did you mean {close[0]!r}?)" if close else ""
