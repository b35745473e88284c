"""Syntax checks that always run: HCL (.tf, .tfvars, .hcl) and YAML/JSON templates and manifests."""

from __future__ import annotations

from typing import Any

from hcl2.api import loads as parse_hcl
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from iac_code.iac.checkers.base import FileByFileChecker
from iac_code.iac.classify import HCL_KINDS, STRUCTURED_KINDS, FileKind
from iac_code.iac.findings import Finding
from iac_code.iac.sources import SourceFile
from iac_code.iac.yamlnodes import StructuredSyntaxError, parse_structured

UNCLOSED_QUOTE = "Line has unclosed quote marks: "


class HclSyntaxChecker(FileByFileChecker):
    name = "hcl-syntax"
    summary = "HCL syntax of .tf, .tfvars and .hcl files"
    kinds = HCL_KINDS
    package = "bc-python-hcl2"

    def applies_to(self, source: SourceFile) -> bool:
        return not source.rel.endswith(".json")  # .tf.json / .tfvars.json: the JSON check

    def check_file(self, source: SourceFile, text: str) -> list[Finding]:
        try:
            parse_hcl(text)
        except UnexpectedInput as exc:
            return [self._finding(source, _line(exc), _describe(exc))]
        except ValueError as exc:  # the library's own pre-scan of string quotes
            message = str(exc)
            return [self._finding(source, _quoted_line(text, message), message.split(":", 1)[0])]
        return []

    def _finding(self, source: SourceFile, line: int | None, message: str) -> Finding:
        return Finding(self.name, "hcl-syntax", "error", source.rel, line, f"invalid HCL: {message}")


class StructuredSyntaxChecker(FileByFileChecker):
    name = "yaml-syntax"
    summary = "YAML/JSON syntax of CloudFormation, ROS, Kubernetes, kustomize and Helm chart files"
    kinds = STRUCTURED_KINDS | {FileKind.TERRAFORM, FileKind.TFVARS}
    package = "PyYAML"

    def applies_to(self, source: SourceFile) -> bool:
        return source.kind in STRUCTURED_KINDS or source.rel.endswith(".json")

    def check_file(self, source: SourceFile, text: str) -> list[Finding]:
        try:
            parse_structured(source.rel, text)
        except StructuredSyntaxError as exc:
            return [Finding(self.name, exc.rule, "error", source.rel, exc.line, exc.message)]
        return []


def _line(exc: UnexpectedInput) -> int | None:
    line: Any = getattr(exc, "line", None)
    return line if isinstance(line, int) and line >= 1 else None


def _describe(exc: UnexpectedInput) -> str:
    column = getattr(exc, "column", None)
    where = f" at column {column}" if isinstance(column, int) and column >= 1 else ""
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return "unexpected end of file (a block, bracket or string is not closed)"
        return f"unexpected {str(exc.token.value).strip() or exc.token.type!r}{where}"
    if isinstance(exc, UnexpectedCharacters):
        return f"unexpected character {exc.char!r}{where}"
    if isinstance(exc, UnexpectedEOF):
        return "unexpected end of file (a block, bracket or string is not closed)"
    return str(exc).splitlines()[0]


def _quoted_line(text: str, message: str) -> int | None:
    """The line the library quotes in its "unclosed quote marks" error."""
    if not message.startswith(UNCLOSED_QUOTE):
        return None
    quoted = message[len(UNCLOSED_QUOTE) :].strip()
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() == quoted:
            return number
    return None
