"""The skills shipped with iac-code: found in the installed package, shipped by pyproject's package data, each
well formed (front matter valid, the folder's name, a description that says when it applies), short, and
with no relative link to a file that is not there."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from iac_code.skills.discovery import BUNDLED_DIR, bundled_skills
from iac_code.skills.skill_file import Skill, read_body

REPOSITORY = Path(__file__).resolve().parents[3]
SKILLS = [item for item in bundled_skills() if isinstance(item, Skill)]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_they_are_found_where_the_installed_package_keeps_them():
    installed = resources.files("iac_code.skills").joinpath("bundled")
    assert Path(str(installed)).resolve() == BUNDLED_DIR.resolve()
    assert sorted(entry.name for entry in installed.iterdir() if entry.is_dir() and not entry.name.startswith("_")) == (
        sorted(skill.name for skill in SKILLS)
    )
    assert len(SKILLS) == 5


def test_every_file_of_every_bundled_skill_ships_in_the_package():
    config = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    package = REPOSITORY / "src" / "iac_code"
    patterns = config["tool"]["setuptools"]["package-data"]["iac_code"]
    shipped = {path for pattern in patterns for path in package.glob(pattern)}
    files = {path for path in BUNDLED_DIR.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    assert files and files <= shipped, sorted(str(path.relative_to(BUNDLED_DIR)) for path in files - shipped)


@pytest.mark.parametrize("skill", SKILLS, ids=lambda skill: skill.name)
def test_each_is_well_formed_short_and_says_when_it_applies(skill: Skill):
    assert skill.folder.name == skill.name and skill.origin == "bundled"
    assert "Use when" in skill.description or "Use it when" in skill.description or "Use before" in skill.description
    assert len(skill.description) <= 250, "the system prompt lists every description: keep them short"
    body = read_body(skill)
    assert body.startswith("# ")
    assert len(skill.file.read_text().splitlines()) <= 150


@pytest.mark.parametrize("skill", SKILLS, ids=lambda skill: skill.name)
def test_relative_links_lead_to_files_of_the_skill(skill: Skill):
    for target in _LINK.findall(read_body(skill)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor
        path = (skill.folder / target.split("#")[0]).resolve()
        assert path.is_file() and path.is_relative_to(skill.folder.resolve()), target
