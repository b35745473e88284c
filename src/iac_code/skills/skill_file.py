"""One skill folder: its `SKILL.md` read, its front matter checked, and its body when it is loaded.

A `SKILL.md` starts with YAML front matter between `---` lines: `name` (lower-case letters, digits and single
hyphens, at most 64 characters, the folder's own name) and `description` (what the skill does and when it
applies, at most 1,024 characters); other fields are allowed and ignored, except `argument-hint`, the hint a
client shows after the skill's slash command. Discovery reads the head of the file only; the body is read
again each time the skill is loaded, so an edit counts at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_HEAD_BYTES = 64 * 1024  # the front matter must end within this (a description is ≤ 1 KiB)
MAX_SKILL_FILE_BYTES = 1024 * 1024

# lower-case letters and digits in groups joined by single hyphens: no leading, trailing or double hyphen
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

# libyaml's parser when PyYAML was built with it: a session parses every skill's front matter as it starts
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Where a skill was found; the order is the precedence of a name clash, nearest first.
Origin = Literal["project", "user", "bundled"]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path  # as found: the name a project gave it, even when it is a symlink to a shared folder
    origin: Origin
    hint: str = ""  # what to type after /name (front matter `argument-hint`)

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True)
class SkillProblem:
    """A skill folder that was skipped, and why (told to the user, once)."""

    file: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


class SkillFileError(Exception):
    """A SKILL.md that cannot be read or has no valid front matter; the message says why."""


def read_skill(folder: Path, origin: Origin) -> Skill | SkillProblem:
    """The skill in `folder` (its `SKILL.md` exists), or why it is skipped."""
    try:
        with (folder / SKILL_FILE).open("rb") as file:
            head = file.read(MAX_HEAD_BYTES).decode("utf-8", errors="replace")
        fields = _front_matter(head)[0]
        name, description = _checked(fields, folder.name)
    except SkillFileError as exc:
        return SkillProblem(folder / SKILL_FILE, str(exc))
    except OSError as exc:
        return SkillProblem(folder / SKILL_FILE, f"cannot be read ({exc.strerror or exc})")
    hint = fields.get("argument-hint")
    return Skill(name, description, folder, origin, hint if isinstance(hint, str) else "")


def read_body(skill: Skill) -> str:
    """The instructions after the front matter, read now. Raises SkillFileError."""
    try:
        with skill.file.open("rb") as file:
            data = file.read(MAX_SKILL_FILE_BYTES + 1)
    except OSError as exc:
        raise SkillFileError(f"{skill.file} cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise SkillFileError(f"{skill.file} is over {MAX_SKILL_FILE_BYTES // 1024} KiB")
    try:
        return _front_matter(data.decode("utf-8", errors="replace"))[1].strip()
    except SkillFileError as exc:
        raise SkillFileError(f"{skill.file}: {exc}") from None


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise SkillFileError("no front matter (the file must start with a --- line, then YAML, then ---)")
    try:
        fields = yaml.load(match.group(1), Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""  # + the opening fence, 1-based
        raise SkillFileError(f"its front matter is not valid YAML{where}") from None
    if not isinstance(fields, dict):
        raise SkillFileError("its front matter is not a mapping of fields")
    return fields, text[match.end() :]


def _checked(fields: dict[str, Any], folder_name: str) -> tuple[str, str]:
    name, description = fields.get("name"), fields.get("description")
    if not isinstance(name, str) or not name:
        raise SkillFileError("`name` is missing or not text")
    if len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
        raise SkillFileError(
            f"`name` {name!r} must be lower-case letters, digits and single hyphens"
            f", at most {MAX_NAME_CHARS} characters"
        )
    if name != folder_name:
        raise SkillFileError(f"`name` {name!r} is not the folder's name {folder_name!r}")
    if not isinstance(description, str) or not description.strip():
        raise SkillFileError("`description` is missing or empty")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillFileError(f"`description` is over {MAX_DESCRIPTION_CHARS} characters")
    return name, " ".join(description.split())
