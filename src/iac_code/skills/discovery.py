"""Which skills a session has: the project's, the user's and the bundled ones, one per name, nearest first.

Skill folders (`<skills dir>/<name>/SKILL.md`) are looked for, in this order of precedence:
1. each directory from the workspace up to the repository root (repository.py), nearest first, in its
   `.iac-code/skills/`, `.agents/skills/` and `.claude/skills/` (in that order);
2. the user's `<config dir>/skills/`;
3. the skills shipped with iac-code (`bundled/`).
The first skill found with a name wins; a skill further away with the same name is left out. A folder
without a `SKILL.md`, or a hidden one, is not a skill; a skill whose front matter is wrong is skipped
and reported: logged once per process, and kept in `SkillCatalog.problems` for the session to tell.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from iac_code.skills.skill_file import SKILL_FILE, Origin, Skill, SkillProblem, read_skill

logger = logging.getLogger(__name__)

PROJECT_SKILL_DIRS = (Path(".iac-code") / "skills", Path(".agents") / "skills", Path(".claude") / "skills")
USER_SKILL_DIR = "skills"  # under the config dir
BUNDLED_DIR = Path(__file__).parent / "bundled"
MAX_FOLDERS_PER_DIR = 500  # a skills directory is hand-written; more is a mistake, not a library

_reported: set[SkillProblem] = set()  # problems already logged by this process


@dataclass(frozen=True)
class SkillCatalog:
    skills: tuple[Skill, ...] = ()  # one per name, nearest first
    problems: tuple[SkillProblem, ...] = ()  # skipped skill folders, in the order found

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)

    @property
    def names(self) -> list[str]:
        return [skill.name for skill in self.skills]


def find_skills(project_dirs: Sequence[Path], config_dir: Path | None, *, bundled: bool = True) -> SkillCatalog:
    """The skills of a session whose project directories are `project_dirs` (repository.project_directories:
    the workspace first; see the module's docstring)."""
    found: list[Skill | SkillProblem] = []
    for directory in project_dirs:
        for skills_dir in PROJECT_SKILL_DIRS:
            found += _skills_in(directory / skills_dir, "project")
    if config_dir is not None:
        found += _skills_in(config_dir / USER_SKILL_DIR, "user")
    if bundled:
        found += bundled_skills()
    return _catalog(found)


@functools.cache
def bundled_skills() -> tuple[Skill | SkillProblem, ...]:
    """The skills shipped in the package (read once: they do not change while the process runs)."""
    return tuple(_skills_in(BUNDLED_DIR, "bundled"))


def _catalog(found: Iterable[Skill | SkillProblem]) -> SkillCatalog:
    skills: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for item in found:
        if isinstance(item, SkillProblem):
            problems.append(item)
            _report(item)
        elif item.name in skills:
            logger.debug("skill %s left out: %s has the same name and is nearer", item.file, skills[item.name].file)
        else:
            skills[item.name] = item
    return SkillCatalog(tuple(skills.values()), tuple(problems))


def _skills_in(skills_dir: Path, origin: Origin) -> Iterator[Skill | SkillProblem]:
    for folder in _folders(skills_dir):
        if (folder / SKILL_FILE).is_file():
            yield read_skill(folder, origin)


def _folders(skills_dir: Path) -> list[Path]:
    try:
        entries = sorted(entry for entry in skills_dir.iterdir() if not entry.name.startswith("."))
    except OSError:  # no such directory (the usual case), or unreadable
        return []
    if len(entries) > MAX_FOLDERS_PER_DIR:
        logger.warning("%s holds %d entries; only the first %d are read", skills_dir, len(entries), MAX_FOLDERS_PER_DIR)
    return [entry for entry in entries[:MAX_FOLDERS_PER_DIR] if entry.is_dir()]


def _report(problem: SkillProblem) -> None:
    if problem not in _reported:
        _reported.add(problem)
        logger.warning("skill skipped: %s", problem)
