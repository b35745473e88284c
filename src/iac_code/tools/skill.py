"""skill: loads one of the session's skills (iac_code/skills/), or one of its reference files.

Without `reference`, the answer is the instructions of the skill's `SKILL.md` (after the front matter, read
now) with the list of the other files in its folder; with it, that file's numbered lines, paged as read_file
pages. A reference must stay inside the skill's folder: an absolute path, `..` or a symlink leading out is
refused, and the file is opened from the folder one component at a time without following links
(confined_io.py). Loading a skill runs nothing: its scripts run only through bash, asked as usual.
A read, judged so in every mode: the files are ones the user placed in a skills folder or iac-code ships.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Any

from iac_code.skills.discovery import SkillCatalog
from iac_code.skills.skill_file import SKILL_FILE, Skill, SkillFileError, read_body
from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult, integer_arg, required_text
from iac_code.tools.confined_io import read_text_file
from iac_code.tools.file_work import run_file_work
from iac_code.tools.files import READ_DEFAULT_LINES, number_lines
from iac_code.tools.workspace import truncate_middle

TOOL_NAME = "skill"
MAX_LISTED_REFERENCES = 200


class SkillTool:
    name = TOOL_NAME
    category: Category = "read"
    kind: Kind = "read"
    description = (
        "Load a skill listed in the system prompt: its instructions, and the list of its reference files. "
        "Call it when a skill's description applies to the task, before doing the work, and follow what it says. "
        "With `reference` (a path from that list, relative to the skill's folder), read one of those files "
        "instead. Loading runs nothing: run a skill's scripts with bash if its instructions say so."
    )
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
            "reference": {"type": "string", "description": "A file of the skill, relative to its folder."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line of the reference to read."},
        },
        "required": ["name"],
    }

    def __init__(self, catalog: SkillCatalog) -> None:
        self._catalog = catalog

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        name, reference = str(args.get("name", "")), args.get("reference")
        return f"Read {name}/{reference}" if isinstance(reference, str) and reference else f"Load skill {name}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        skill = self._catalog.get(str(args.get("name", "")))
        reference = args.get("reference")
        if skill is None:
            return []
        if not isinstance(reference, str) or not reference:
            return [str(skill.file)]
        try:
            return [str(reference_path(skill, reference))]
        except ToolError:
            return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        skill = self._skill(required_text(args, "name"))
        reference = args.get("reference")
        if reference is not None and not isinstance(reference, str):
            raise ToolError("'reference' must be a path relative to the skill's folder")
        if reference:
            path = reference_path(skill, reference)
            text = await run_file_work(read_text_file, skill.folder.resolve(), path)
            return ToolResult(number_lines(text, integer_arg(args, "offset", 1, low=1), READ_DEFAULT_LINES))
        return ToolResult(await run_file_work(_loaded, skill))

    def _skill(self, name: str) -> Skill:
        skill = self._catalog.get(name)
        if skill is None:
            known = ", ".join(self._catalog.names) or "none"
            raise ToolError(f"there is no skill named {name!r}; the skills are: {known}")
        return skill


def reference_path(skill: Skill, reference: str) -> Path:
    """The file `reference` names in the skill's folder (symlinks resolved), refused unless it stays inside."""
    root = skill.folder.resolve()
    if PurePath(reference).is_absolute():
        raise ToolError(f"reference {reference!r} must be a path relative to the folder of skill {skill.name!r}")
    try:
        path = (root / reference).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolError(f"cannot resolve reference {reference!r}: {exc}") from None
    if path == root or not path.is_relative_to(root):
        raise ToolError(f"reference {reference!r} leads outside the folder of skill {skill.name!r}; refused")
    return path


def _loaded(skill: Skill) -> str:
    """The skill's instructions, then where it lives and what else its folder holds."""
    try:
        body = truncate_middle(read_body(skill))
    except SkillFileError as exc:
        raise ToolError(str(exc)) from None
    references = _references(skill.folder.resolve())
    parts = [body or "(this skill has no instructions beyond its description)", f"Skill folder: {skill.folder}"]
    if references:
        listed = "\n".join(f"- {path}" for path in references[:MAX_LISTED_REFERENCES])
        more = "\n- … and more, not listed" if len(references) > MAX_LISTED_REFERENCES else ""
        parts.append(f'Reference files (read one with skill(name="{skill.name}", reference=PATH)):\n{listed}{more}')
    return "\n\n".join(parts)


def _references(root: Path) -> list[str]:
    """The files of the folder other than SKILL.md as relative paths (each directory's files, then its
    subdirectories', sorted), hidden ones and links out skipped; the walk stops one past MAX_LISTED_REFERENCES
    (a skill folder may hold a whole project)."""
    found: list[str] = []
    for directory, subdirectories, files in os.walk(root):  # top-down; does not enter symlinked directories
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        for name in sorted(files):
            path = Path(directory, name)
            if name.startswith(".") or path == root / SKILL_FILE:
                continue
            if path.is_file() and path.resolve().is_relative_to(root):
                found.append(path.relative_to(root).as_posix())
                if len(found) > MAX_LISTED_REFERENCES:
                    return found
    return found
