"""Permission rules in force for one workspace: where they come from, which fits a call, and the project's trust.

Sources: the user's `config.json` (`{"permissions": {"deny": [...], "ask": [...], "allow": [...]}}`) and each
project file `.iac-code/settings.json` from the repository root (the nearest `.git`) down to the workspace
(the same shape). Deny beats ask beats allow, whatever the file. A project file's deny and ask rules always
hold; its allow rules only when the user trusts the project (a cloned repository must not allow itself
`Bash(*)`): the workspace is in config.json's `trustedProjects` (directories), or the user trusted it
with `/permissions trust` (remembered in `<config dir>/trusted-projects.json`; on a shared server, each
principal's own in `<config dir>/trusted-projects-by-principal.json`: bob's trust is never alice's, nor the
local user's). A Plan rule only denies or
asks: an infrastructure change is never approved by a rule. A bad entry is a `RulesError` naming the file
and the entry, at start-up (the user's) or when a session opens the workspace (the project's).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iac_code.agent.policy import JudgedCall, RuleDecision, RuleHit
from iac_code.agent.rule_files import project_files
from iac_code.agent.rule_patterns import CallView, Pattern, RuleError, parse_pattern
from iac_code.principals import LOCAL, Principal, is_shared

TRUST_FILE = "trusted-projects.json"
PRINCIPALS_TRUST_FILE = "trusted-projects-by-principal.json"  # {"principals": {"<name>": ["<dir>", …]}}
_WRITING = threading.Lock()
DECISIONS: tuple[RuleDecision, ...] = ("deny", "ask", "allow")
_PATH_FORM = re.compile(r"^(?P<kind>Read|Write)\((?P<body>.+)\)$", re.DOTALL)


class RulesError(Exception):
    """A rule, or a rules file, that cannot be used; the message names the file and the entry."""

    def __init__(self, file: Path, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file


@dataclass(frozen=True)
class Rule:
    decision: RuleDecision
    pattern: Pattern
    file: Path

    @property
    def hit(self) -> RuleHit:
        return RuleHit(self.decision, self.pattern.entry, str(self.file))


@dataclass(frozen=True)
class Rules:
    """The rules in force for a workspace, by decision, and the project allow rules left out (untrusted)."""

    workspace: Path
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    project_files: tuple[Path, ...] = ()
    trusted: bool = False
    untrusted_allow: tuple[Rule, ...] = ()

    _indexes: dict[RuleDecision, _Index] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._indexes.update({decision: _Index(getattr(self, decision)) for decision in DECISIONS})

    def match(self, call: JudgedCall) -> RuleHit | None:
        """The rule that decides `call`: the first deny rule that fits one of its commands, else the first
        ask rule, else an allow rule when allow rules fit all of it (each command of a line)."""
        if not (self.deny or self.ask or self.allow):
            return None
        view = CallView(call.subject, call.arguments, call.details, self.workspace, call.opened)
        for decision in ("deny", "ask"):
            for rule in self._indexes[decision].candidates(view):
                if rule.pattern.fits(view, "any"):
                    return rule.hit
        return self._allowed(view, self._indexes["allow"])

    def _allowed(self, view: CallView, index: _Index) -> RuleHit | None:
        candidates = index.candidates(view)
        whole = next((rule.hit for rule in candidates if rule.pattern.fits(view, "all")), None)
        if whole is not None or view.subject != "bash" or not view.commands:
            return whole
        # a line of several commands: each needs an allow rule of its own; the first command's is named
        commands = [r for r in candidates if r.pattern.kind == "Bash" and not r.pattern.subjects]
        fitting = [next((r for r in commands if r.pattern.fits_command(c, "all")), None) for c in view.commands]
        first = fitting[0]
        return first.hit if first is not None and all(fitting) else None

    def described(self, remembered: dict[str, str]) -> str:
        """What /permissions shows: the rules in force with their files, the project's trust, the remembered
        answers."""
        lines = []
        for decision in DECISIONS:
            in_force: Sequence[Rule] = getattr(self, decision)
            lines.append(f"{decision.capitalize()} rules:" if in_force else f"{decision.capitalize()} rules: none")
            lines += [f'  "{rule.pattern.entry}" ({rule.file})' for rule in in_force]
        if self.project_files:
            files = ", ".join(str(f) for f in self.project_files)
            trust = "trusted" if self.trusted else "not trusted"
            lines.append(f"Project: {trust} ({files})")
            if self.untrusted_allow:
                entries = ", ".join(f'"{rule.pattern.entry}"' for rule in self.untrusted_allow)
                lines.append(f"  allow rules not in force until you trust it (/permissions trust): {entries}")
        else:
            lines.append("Project: no .iac-code/settings.json")
        answers = ", ".join(f"{name} ({answer})" for name, answer in sorted(remembered.items())) or "none"
        lines.append(f"Remembered answers: {answers}")
        return "\n".join(lines)


class _Index:
    """One decision's rules, found by what a call can fit (its tool, its programs, its kind of argument), so
    that a call is tried against a few of 200 rules; in their written order."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._order = {id(rule): position for position, rule in enumerate(rules)}
        self._by_subject: dict[str, list[Rule]] = {}
        self._by_program: dict[str, list[Rule]] = {}  # Bash rules by their first word, when it is plain
        self._by_kind: dict[str, list[Rule]] = {}  # the rest: Bash rules starting with a glob, paths, hosts…
        for rule in rules:
            pattern = rule.pattern
            if pattern.subjects:
                for subject in pattern.subjects:
                    self._by_subject.setdefault(subject, []).append(rule)
            elif pattern.kind == "Bash" and isinstance(pattern.words[0], str):
                self._by_program.setdefault(pattern.words[0], []).append(rule)
            else:
                self._by_kind.setdefault(pattern.kind, []).append(rule)
        self._bash = [r for r in rules if r.pattern.kind == "Bash" and not r.pattern.subjects]

    def candidates(self, view: CallView) -> list[Rule]:
        found = list(self._by_subject.get(view.subject, ()))
        if view.subject == "bash":
            programs = view.programs
            if programs is None:  # a program computed at run time, or an unreadable line: any rule may fit
                found += self._bash
            else:
                found += [r for name in programs for r in self._by_program.get(name, ())]
                found += self._by_kind.get("Bash", ())
        for kind in view.kinds:
            found += self._by_kind.get(kind, ())
        return sorted(set(found), key=lambda rule: self._order[id(rule)]) if len(found) > 1 else found


def parse_permissions(value: object, file: Path) -> dict[RuleDecision, list[Rule]]:
    """A `permissions` object's rules by decision; RulesError naming `file` and the bad entry."""
    if value is None:
        return {decision: [] for decision in DECISIONS}
    if not isinstance(value, dict):
        raise RulesError(file, '"permissions" must be an object with "deny", "ask" and "allow" lists')
    for key in value.keys() - set(DECISIONS):
        raise RulesError(file, f'"permissions" has an unknown key {key!r} (expected "deny", "ask", "allow")')
    found: dict[RuleDecision, list[Rule]] = {}
    for decision in DECISIONS:
        entries = value.get(decision, [])
        if not isinstance(entries, list):
            raise RulesError(file, f'"permissions.{decision}" must be a list of rules')
        found[decision] = [_rule(decision, entry, file) for entry in entries]
    return found


def _rule(decision: RuleDecision, entry: object, file: Path) -> Rule:
    try:
        pattern = parse_pattern(entry)
    except RuleError as exc:
        raise RulesError(file, f"bad rule {json.dumps(entry)} in permissions.{decision}: {exc}") from None
    if decision == "allow" and pattern.kind == "Plan":
        message = "a Plan rule may only deny or ask: an infrastructure change is always asked"
        raise RulesError(file, f"bad rule {json.dumps(entry)} in permissions.allow: {message}")
    return Rule(decision, pattern, file)


def user_rules(permissions: object, trusted_projects: object, config_file: Path) -> dict[RuleDecision, list[Rule]]:
    """The user's rules (config.json), checked; also checks `trustedProjects`. For the start-up."""
    trusted_directories(trusted_projects, config_file)
    return parse_permissions(permissions, config_file)


def trusted_directories(value: object, config_file: Path) -> list[Path]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RulesError(config_file, '"trustedProjects" must be a list of directories')
    return [Path(item).expanduser().resolve() for item in value]


def load_rules(
    project_dirs: Sequence[Path],
    permissions: object,
    trusted_projects: object,
    config_dir: Path,
    *,
    remembered_trust: bool = True,
    principal: Principal = LOCAL,
    additional: Sequence[Sequence[Path]] = (),
) -> Rules:
    """The rules in force for the workspace whose project directories (repository.project_directories, the
    workspace first) are `project_dirs`; RulesError for a bad entry in any file. `remembered_trust`: whether
    the user's earlier `/permissions trust` counts (headless: only `trustedProjects` does). `additional`: the
    project directories of each additional directory of the session (the root first), whose project files
    count as the cwd's do, each trusted on its own, their relative Read/Write patterns taken from that root."""
    config_file = config_dir / "config.json"
    user = user_rules(permissions, trusted_projects, config_file)
    files = project_files(project_dirs)
    projects = [parse_permissions(_read_project_file(file), file) for file in files]
    trusted_dirs = trusted_directories(trusted_projects, config_file)
    if remembered_trust:
        trusted_dirs += remembered_trusted(config_dir, principal)
    here = project_dirs[0]
    trusted = _trusted(here, trusted_dirs)
    project_allow = [rule for project in projects for rule in project["allow"]]
    seen = set(files)
    others = [_root_rules(here, dirs, seen, trusted_dirs) for dirs in additional]
    other_allow = [rule for rules, root_trusted in others for rule in rules["allow"] if root_trusted]
    other_untrusted = [rule for rules, root_trusted in others for rule in rules["allow"] if not root_trusted]
    return Rules(
        workspace=here,
        deny=tuple(user["deny"] + [rule for project in projects for rule in project["deny"]] + _all(others, "deny")),
        ask=tuple(user["ask"] + [rule for project in projects for rule in project["ask"]] + _all(others, "ask")),
        allow=tuple(user["allow"] + (project_allow if trusted else []) + other_allow),
        project_files=tuple(files) + tuple(rule_file for dirs in additional for rule_file in project_files(dirs)),
        trusted=trusted,
        untrusted_allow=(() if trusted else tuple(project_allow)) + tuple(other_untrusted),
    )


def _trusted(root: Path, trusted_dirs: Sequence[Path]) -> bool:
    return any(root == d or d in root.parents for d in trusted_dirs)


def _root_rules(
    here: Path, dirs: Sequence[Path], seen: set[Path], trusted_dirs: Sequence[Path]
) -> tuple[dict[RuleDecision, list[Rule]], bool]:
    """An additional directory's project rules (the files the cwd's did not read already: a shared repository
    root's count once, as the cwd's), their relative Read/Write patterns anchored at it, and its trust: a
    cloned repository beside the cwd allows itself nothing until the user trusts it."""
    root = dirs[0]
    found: dict[RuleDecision, list[Rule]] = {decision: [] for decision in DECISIONS}
    for file in project_files(dirs):
        if file in seen:
            continue
        seen.add(file)
        anchor = os.path.relpath(root, here) if root.is_relative_to(here) else root.as_posix()  # as paths are seen
        for decision, rules in parse_permissions(_anchored(_read_project_file(file), anchor), file).items():
            found[decision] += rules
    return found, _trusted(root, trusted_dirs)


def _anchored(permissions: object, root: str) -> object:
    """`permissions` with each relative `Read(…)`/`Write(…)` pattern made absolute from `root`."""
    if not isinstance(permissions, dict):
        return permissions
    return {
        key: [_anchored_entry(entry, root) for entry in entries] if isinstance(entries, list) else entries
        for key, entries in permissions.items()
    }


def _anchored_entry(entry: object, root: str) -> object:
    if not isinstance(entry, str):
        return entry
    form = _PATH_FORM.match(entry.strip())
    if form is None or form["body"].strip().startswith(("/", "~")):
        return entry
    body = form["body"].strip().removeprefix("./")
    return f"{form['kind']}({root}/{body})"


def _all(others: Sequence[tuple[dict[RuleDecision, list[Rule]], bool]], decision: RuleDecision) -> list[Rule]:
    return [rule for rules, _ in others for rule in rules[decision]]


def _read_project_file(file: Path) -> object:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RulesError(file, f"cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise RulesError(file, "must hold a JSON object")
    return data.get("permissions")


def remembered_trusted(config_dir: Path, principal: Principal = LOCAL) -> list[Path]:
    """The projects `principal` trusted with /permissions trust."""
    return [Path(p) for p in _trusted_by(config_dir, principal)]


def remember_trust(config_dir: Path, workspace: Path, principal: Principal = LOCAL) -> None:
    """Trust the project at `workspace` from now on, for `principal` (its allow rules apply), written atomically."""
    with _WRITING:  # sessions of several principals trust at once, each from a thread: no update lost
        _remember_trust(config_dir, workspace, principal)


def _remember_trust(config_dir: Path, workspace: Path, principal: Principal) -> None:
    projects = _trusted_by(config_dir, principal)
    if str(workspace.resolve()) not in projects:
        projects.append(str(workspace.resolve()))
    if not is_shared(principal):
        _write_json(config_dir / TRUST_FILE, {"projects": projects})
        return
    everyone = _principals_trust(config_dir)
    everyone[principal.name] = projects
    _write_json(config_dir / PRINCIPALS_TRUST_FILE, {"principals": everyone})


def _trusted_by(config_dir: Path, principal: Principal) -> list[str]:
    if is_shared(principal):
        return _principals_trust(config_dir).get(principal.name, [])
    data = _read_json(config_dir / TRUST_FILE)
    projects = data.get("projects") if isinstance(data, dict) else None
    return [p for p in projects if isinstance(p, str)] if isinstance(projects, list) else []


def _principals_trust(config_dir: Path) -> dict[str, list[str]]:
    data = _read_json(config_dir / PRINCIPALS_TRUST_FILE)
    found = data.get("principals") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return {}
    return {
        str(name): [p for p in projects if isinstance(p, str)]
        for name, projects in found.items()
        if isinstance(projects, list)
    }


def _read_json(file: Path) -> object:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # none yet (an unreadable file trusts nothing)


def _write_json(target: Path, data: object) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    temporary.replace(target)
