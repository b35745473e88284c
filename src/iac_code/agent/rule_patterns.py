"""One permission rule's pattern: parsed from its entry, and whether a call fits it.

Forms (rules.py has the sources and the order):
- `Bash(<words>)`: a command whose first words fit the rule's (a prefix: `Bash(terraform plan)` fits
  `terraform plan -out x`); a word may hold globs (`kube*`), a lone `*` stands for any words. The
  program is compared by base name (`/usr/bin/kubectl` is `kubectl`). A deny or ask rule also fits the
  command read without its CLI's global options (infra_commands/rule_readings.py); an allow rule does not.
- `Read(<glob>)`, `Write(<glob>)`: the path argument of a read tool (read_file, grep, glob, list_files) or a
  write tool (write_file, edit_file), relative to the workspace; `*` stays within a directory, `**` crosses
  them, a trailing `/` means everything under it. The path is resolved once (`opened_path`, by the loop):
  the rules judge it and the tool opens it.
- `WebFetch(<domain>)`: web_fetch's host (globs: `*.example.com`).
- `Mcp(<server>)`, `Mcp(<server>__<tool>)`: MCP tools by their server and name as the model sees them.
- `Plan(<action> <address glob>)`: a resource of a reviewed plan (a bound apply's question carries it) whose
  action (create, update, delete, replace, forget, move, or `*`) and address fit; `delete` also fits the
  delete half of a replace. The address, its `previousAddress`, and both without instance keys are tried; a
  leading `**.` is the root module or any module.
- a bare tool name (`iac_check`, `mcp__github__create_issue`), or `Bash`, `Read`, `Write`, `WebFetch` alone:
  every call of that tool or family.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from iac_code.infra_commands.rule import Assignments, line_assignments, program_name, simple_commands
from iac_code.infra_commands.rule_readings import rule_readings
from iac_code.infra_commands.shell_syntax import Word
from iac_code.tools.base import AccessDetails, ToolError
from iac_code.tools.workspace import resolved_path

READ_TOOLS = frozenset({"read_file", "grep", "glob", "list_files"})
WRITE_TOOLS = frozenset({"write_file", "edit_file"})
FAMILIES: dict[str, frozenset[str]] = {
    "Bash": frozenset({"bash"}),
    "Read": READ_TOOLS,
    "Write": WRITE_TOOLS,
    "WebFetch": frozenset({"web_fetch"}),
}
PLAN_ACTIONS = frozenset({"create", "update", "delete", "replace", "forget", "move", "*"})
MCP_PREFIX = "mcp__"  # mcp/naming.py's PREFIX (a layer above: mcp imports tools, not agent)

_FORM = re.compile(r"^(?P<kind>[A-Za-z]+)\((?P<body>.*)\)$", re.DOTALL)
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_UNSAFE_IN_NAMES = re.compile(r"[^A-Za-z0-9_\-*?\[\]!]")  # what mcp/naming.py turns into "_" (globs kept)

Fit = Literal["all", "any"]  # allow rules must fit every command of a line; deny and ask rules any one


class RuleError(ValueError):
    """An entry that is no rule: unknown form, bad glob, wrong type."""


@dataclass(frozen=True)
class CallView:
    """What rules look at in one call, worked out once however many rules there are."""

    subject: str
    arguments: Mapping[str, Any]
    details: AccessDetails | None
    workspace: Path
    opened: Path | None = None  # the path the tool will open, resolved once (opened_path)

    @cached_property
    def line(self) -> str | None:
        """A bash call's line, or the command a guard's shim asks about; None for other calls."""
        asked = self.details.command if self.details is not None else ""
        command = asked or self.arguments.get("command")
        return command if self.subject == "bash" and isinstance(command, str) else None

    @cached_property
    def commands(self) -> list[list[Word]] | None:
        """The simple commands of the line (`line`)."""
        return simple_commands(self.line) if self.line is not None else []

    @cached_property
    def terraform_env(self) -> Assignments:
        """The values the line gives TF_CLI_ARGS* anywhere (terraform takes arguments from them)."""
        return line_assignments(self.line) if self.line is not None else {}

    @cached_property
    def programs(self) -> set[str] | None:
        """The names the line's programs go by (as written, base name, without a version); None when one is
        computed at run time or the line cannot be read."""
        commands = self.commands
        if commands is None or any(words[0].dynamic for words in commands if words):
            return None
        return {name for words in commands if words for name in program_names(words[0].text)}

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """The rule forms other than Bash and tool names that may fit this call."""
        if self.subject in READ_TOOLS:
            return ("Read",)
        if self.subject in WRITE_TOOLS:
            return ("Write",)
        if self.subject == "web_fetch":
            return ("WebFetch",)
        if self.subject.startswith(MCP_PREFIX):
            return ("Mcp",)
        return ("Plan",) if self.resources else ()

    @cached_property
    def path(self) -> str | None:
        if self.subject not in READ_TOOLS | WRITE_TOOLS:
            return None
        if self.opened is not None:
            return as_rules_see(self.workspace, str(self.opened))
        raw = self.arguments.get("path")
        return workspace_relative(self.workspace, raw if isinstance(raw, str) and raw else ".")

    @cached_property
    def host(self) -> str | None:
        url = self.arguments.get("url")
        if self.subject != "web_fetch" or not isinstance(url, str):
            return None
        try:
            return (urlsplit(url.strip()).hostname or "").lower()
        except ValueError:
            return ""

    @cached_property
    def resources(self) -> list[tuple[frozenset[str], frozenset[str]]]:
        """The plan's resources: (the addresses a rule may name it by, its action and terraform's actions)."""
        plan = self.details.plan if self.details is not None else None
        found = plan.get("resources") if isinstance(plan, dict) else None
        return [_resource(r) for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _resource(resource: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """A resource's names and actions. Its names: its address, the address it had before a `moved` block
    (`previousAddress`: the destroy of the resource the rule named is planned under the new one), and both
    without their instance keys (`terraform_data.db[0]` is `terraform_data.db`: a `count` added or changed
    must not take a resource out of its rule's reach)."""
    actions = resource.get("actions")
    named = [resource.get("action"), *(actions if isinstance(actions, list) else [])]
    written = [resource.get("address"), resource.get("previousAddress")]
    addresses = {text for address in written if isinstance(address, str) and address for text in _forms(address)}
    return frozenset(addresses), frozenset(a for a in named if isinstance(a, str))


_INSTANCE_KEY = re.compile(r'\[(?:"(?:[^"\\]|\\.)*"|[^\]"]*)\]')  # `[0]`, `["a.b]"]`


def _forms(address: str) -> tuple[str, str]:
    return address, _INSTANCE_KEY.sub("", address)


@functools.lru_cache(maxsize=1024)
def program_names(text: str) -> frozenset[str]:
    """What a rule's first word may name the program as: as written, its base name, without a version."""
    return frozenset({text, text.rsplit("/", 1)[-1], program_name(text)})


def workspace_relative(workspace: Path, raw: str) -> str:
    """A path argument as rules see it: relative to the workspace ("." for itself), or absolute when outside;
    symbolic links followed, as the tools follow them (a link to `.env` is `.env`)."""
    return as_rules_see(workspace, os.path.realpath(os.path.join(workspace, os.path.expanduser(raw))))


def as_rules_see(workspace: Path, full: str) -> str:
    relative = os.path.relpath(full, workspace)
    return full if relative == ".." or relative.startswith("../") else relative


def opened_path(subject: str, arguments: Mapping[str, Any], workspace: Path) -> Path | None:
    """The path a file tool's call will open, resolved once: the rules judge this path and the tool opens it
    without following links (confined_io.py), so a link flipped between the two cannot send the open to a
    file the rules deny. None for other tools, or a path that cannot be resolved (the tool says why)."""
    if subject not in READ_TOOLS | WRITE_TOOLS:
        return None
    raw = arguments.get("path")
    try:
        return resolved_path(workspace, raw if isinstance(raw, str) and raw else ".")
    except ToolError:
        return None


@dataclass(frozen=True)
class Pattern:
    entry: str
    kind: str  # Bash, Read, Write, WebFetch, Mcp, Plan, or Tool (a bare name)
    words: tuple[re.Pattern[str] | str | None, ...] = ()  # Bash: None is a lone `*`
    glob: re.Pattern[str] | None = None
    action: str = ""
    subjects: frozenset[str] = field(default_factory=frozenset)  # a bare name or family

    def fits(self, call: CallView, fit: Fit) -> bool:
        if self.subjects:
            return call.subject in self.subjects
        if self.kind == "Bash":
            return self._fits_line(call, fit)
        if self.kind in ("Read", "Write"):
            tools = READ_TOOLS if self.kind == "Read" else WRITE_TOOLS
            return call.subject in tools and call.path is not None and self._glob(call.path)
        if self.kind == "WebFetch":
            return call.host is not None and self._glob(call.host)
        if self.kind == "Mcp":
            return call.subject.startswith(MCP_PREFIX) and self._glob(call.subject[len(MCP_PREFIX) :])
        return any(self._fits_resource(addresses, actions) for addresses, actions in call.resources)  # Plan

    def fits_command(self, words: Sequence[Word], fit: Fit, env: Assignments | None = None) -> bool:
        """Whether one simple command fits a Bash rule. A word computed at run time may be anything: it fits
        a deny or ask rule's words (`$X pod` may be `kubectl delete pod`), an allow rule's only where it says `*`.
        A deny or ask rule also fits the command read without its CLI's global options (`terraform -chdir=.
        destroy`, `terraform apply -destroy`: rule_readings.py); an allow rule only the command as written."""
        if self.kind != "Bash" or self.subjects or not words:
            return False
        if fit == "all":
            return self._fits_reading(words, fit)
        return any(self._fits_reading(reading, fit) for reading in rule_readings(words, env))

    def _fits_reading(self, words: Sequence[Word], fit: Fit) -> bool:
        first, expected = words[0], self.words[0]
        if first.dynamic or expected is None:
            return self._fits_words(0, words, 0, fit)
        names = program_names(first.text)
        if isinstance(expected, str):
            return expected in names and self._fits_words(1, words, 1, fit)
        return any(expected.fullmatch(name) for name in names) and self._fits_words(1, words, 1, fit)

    def _fits_line(self, call: CallView, fit: Fit) -> bool:
        if call.subject != "bash":
            return False
        commands = call.commands
        if commands is None:  # unreadable: it may run anything its words say, and is never allowed by a rule
            if fit == "all":
                return False
            command = call.arguments.get("command")
            words = [Word(w) for w in str(command).split()]
            return any(self.fits_command(words[start:], fit) for start in range(len(words)))
        if fit == "all":
            return bool(commands) and all(self.fits_command(words, fit) for words in commands)
        return any(self.fits_command(words, fit, call.terraform_env) for words in commands)

    def _fits_words(self, rule_at: int, words: Sequence[Word], at: int, fit: Fit) -> bool:
        if rule_at == len(self.words):
            return True  # a prefix: what follows is free
        expected = self.words[rule_at]
        if expected is None:  # a lone `*`: any run of words, none included
            return any(self._fits_words(rule_at + 1, words, i, fit) for i in range(at, len(words) + 1))
        if at == len(words):
            return False
        word = words[at]
        if word.dynamic:
            if fit == "all":
                return False
            # it may stand for any run of words, the rest of the rule included
            return any(self._fits_words(i, words, at + 1, fit) for i in range(rule_at, len(self.words) + 1))
        matched = word.text == expected if isinstance(expected, str) else expected.fullmatch(word.text) is not None
        return matched and self._fits_words(rule_at + 1, words, at + 1, fit)

    def _glob(self, text: str) -> bool:
        return self.glob is not None and self.glob.fullmatch(text) is not None

    def _fits_resource(self, addresses: frozenset[str], actions: frozenset[str]) -> bool:
        return (self.action == "*" or self.action in actions) and any(self._glob(a) for a in addresses)


def parse_pattern(entry: object) -> Pattern:
    """The pattern an entry holds; RuleError saying what is wrong with it."""
    if not isinstance(entry, str):
        raise RuleError(f'a rule is a string such as "Bash(terraform plan)", not {type(entry).__name__}')
    text = entry.strip()
    if text in FAMILIES:
        return Pattern(entry, text, subjects=FAMILIES[text])
    form = _FORM.match(text)
    if form is None:
        if _TOOL_NAME.match(text):
            return Pattern(entry, "Tool", subjects=frozenset({text}))
        raise RuleError("unknown form: expected Bash(…), Read(…), Write(…), WebFetch(…), Mcp(…), Plan(…), a tool name")
    kind, body = form["kind"], form["body"].strip()
    if not body:
        raise RuleError(f"{kind}() needs something between the parentheses")
    if kind == "Bash":
        return Pattern(entry, kind, words=_command_words(body))
    if kind in ("Read", "Write"):
        return Pattern(entry, kind, glob=path_glob(body + "**" if body.endswith("/") else body))
    if kind == "WebFetch":
        return Pattern(entry, kind, glob=word_glob(body.lower()))
    if kind == "Mcp":  # a server alone: every tool of it; written as config.json names it or as tool names do
        name = _UNSAFE_IN_NAMES.sub("_", body)
        return Pattern(entry, kind, glob=word_glob(name if "__" in name else name + "__*"))
    if kind == "Plan":
        action, _, address = body.partition(" ")
        if action not in PLAN_ACTIONS or not address.strip():
            raise RuleError(f"Plan(<action> <address glob>): the action is one of {', '.join(sorted(PLAN_ACTIONS))}")
        return Pattern(entry, kind, action=action, glob=address_glob(address.strip()))
    raise RuleError(f"unknown form {kind}(…): expected Bash, Read, Write, WebFetch, Mcp or Plan")


def _command_words(body: str) -> tuple[re.Pattern[str] | str | None, ...]:
    try:
        words = shlex.split(body)
    except ValueError as exc:
        raise RuleError(f"cannot read the command: {exc}") from None
    if not words:
        raise RuleError("Bash() needs a command")
    return tuple(None if w == "*" else (word_glob(w) if any(c in w for c in "*?[") else w) for w in words)


def word_glob(text: str) -> re.Pattern[str]:
    """`*` any characters, `?` one, `[…]` a class."""
    return re.compile(_translate(text, star="[\\s\\S]*", one="[\\s\\S]"))


def address_glob(text: str) -> re.Pattern[str]:
    """A Plan rule's address: word_glob's, and a leading `**.` for the root module or any module below it
    (`**.aws_db_instance.*` fits `aws_db_instance.main` and `module.a.module.b["x"].aws_db_instance.main`)."""
    if not text.startswith("**."):
        return word_glob(text)
    return re.compile("(?:[\\s\\S]*\\.)?" + _translate(text[3:], star="[\\s\\S]*", one="[\\s\\S]"))


def path_glob(text: str) -> re.Pattern[str]:
    """`**` any directories, `*` and `?` within one name, `[…]` a class; `x/**` also fits `x`."""
    pattern = text.removeprefix("./") or "."
    translated = _translate(pattern, star="[^/]*", one="[^/]")
    translated = translated.replace("(?:.*)/", "(?:.*/)?")  # `**/x` fits `x` at the top too
    return re.compile(translated.replace("/(?:.*)", "(?:/.*)?"))


def _translate(text: str, *, star: str, one: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if text.startswith("**", index):
            out.append("(?:.*)")
            index += 2
            continue
        if char == "*":
            out.append(star)
        elif char == "?":
            out.append(one)
        elif char == "[":
            end = text.find("]", index + 2)
            if end < 0:
                raise RuleError(f"bad glob {text!r}: '[' without ']'")
            body = text[index + 1 : end]
            body = body.replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            index = end + 1
            continue
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
