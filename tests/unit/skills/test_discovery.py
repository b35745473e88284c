"""Which skills a session finds: the project's from the workspace up to the repository root, the user's, the
bundled ones; the nearest wins a name clash; a bad SKILL.md is skipped, named with why, and logged once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from iac_code.repository import project_directories
from iac_code.skills.discovery import bundled_skills, find_skills
from iac_code.skills.skill_file import Skill, SkillProblem


def skill(skills_dir: Path, name: str, description: str = "", *, folder: str | None = None) -> Path:
    """A SKILL.md in `skills_dir/<folder or name>/`, its description naming where it is."""
    path = skills_dir / (folder or name)
    path.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description or f'{name} from {skills_dir}'}\n---\n# {name}\nDo it.\n"
    (path / "SKILL.md").write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def test_the_nearest_wins_a_name_clash_and_the_order_is_nearest_first(repo, tmp_path):
    workspace = repo / "envs" / "prod"
    workspace.mkdir(parents=True)
    config = tmp_path / "config"
    skill(workspace / ".claude" / "skills", "shared")
    skill(repo / "envs" / ".agents" / "skills", "envs-only")
    skill(repo / ".iac-code" / "skills", "shared")
    skill(repo / ".iac-code" / "skills", "root-only")
    skill(config / "skills", "root-only")
    skill(config / "skills", "mine")
    skill(tmp_path / ".iac-code" / "skills", "above-the-repository")

    catalog = find_skills(project_directories(workspace), config, bundled=False)

    assert catalog.names == ["shared", "envs-only", "root-only", "mine"]
    origins = {s.name: (s.origin, s.folder.parent.parent.parent) for s in catalog.skills}
    assert origins["shared"] == ("project", workspace)
    assert origins["root-only"] == ("project", repo)
    assert origins["mine"][0] == "user"
    assert catalog.problems == ()


def test_in_one_directory_iac_code_then_agents_then_claude(repo):
    skill(repo / ".claude" / "skills", "review", "from claude")
    skill(repo / ".agents" / "skills", "review", "from agents")
    skill(repo / ".agents" / "skills", "lint", "lint from agents")
    skill(repo / ".claude" / "skills", "lint", "lint from claude")
    skill(repo / ".iac-code" / "skills", "lint", "lint from iac-code")
    catalog = find_skills(project_directories(repo), None, bundled=False)
    assert [(s.name, s.description) for s in catalog.skills] == [
        ("lint", "lint from iac-code"),
        ("review", "from agents"),
    ]


def test_outside_a_repository_only_the_workspace_is_searched(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    skill(tmp_path / ".agents" / "skills", "parent")
    skill(workspace / ".agents" / "skills", "own")
    assert find_skills(project_directories(workspace), None, bundled=False).names == ["own"]


def test_a_project_skill_overrides_a_bundled_one_of_the_same_name(repo):
    skill(repo / ".iac-code" / "skills", "plan-review", "our own plan review")
    catalog = find_skills(project_directories(repo), None)
    found = catalog.get("plan-review")
    assert found is not None and found.description == "our own plan review" and found.origin == "project"
    assert catalog.names[0] == "plan-review"
    bundled = [s.name for s in catalog.skills if s.origin == "bundled"]
    assert "plan-review" not in bundled and "terraform-module-authoring" in bundled


def test_hidden_folders_plain_files_and_folders_without_skill_md_are_not_skills(repo):
    skills_dir = repo / ".iac-code" / "skills"
    skill(skills_dir, "real")
    skill(skills_dir, "hidden", folder=".hidden")
    (skills_dir / "notes").mkdir()
    (skills_dir / "notes" / "README.md").write_text("not a skill")
    (skills_dir / "loose.md").write_text("---\nname: loose\ndescription: x\n---\n")
    catalog = find_skills(project_directories(repo), None, bundled=False)
    assert catalog.names == ["real"] and catalog.problems == ()


def test_a_skill_folder_may_be_a_symlink_and_keeps_the_link_name(repo, tmp_path):
    shared = skill(tmp_path / "shared", "terraform-style")
    skills_dir = repo / ".claude" / "skills"
    skills_dir.mkdir(parents=True)
    (skills_dir / "terraform-style").symlink_to(shared)
    (found,) = find_skills(project_directories(repo), None, bundled=False).skills
    assert found.name == "terraform-style" and found.folder == skills_dir / "terraform-style"


BAD_FRONT_MATTER = {
    "no front matter": ("# just a heading\n", "no front matter"),
    "unclosed front matter": ("---\nname: bad\ndescription: x\n# body\n", "no front matter"),
    "invalid YAML": ("---\nname: bad\ndescription: a: b\n---\n", "not valid YAML (line 3)"),
    "unclosed YAML": ("---\nname: bad\ndescription: [unclosed\n---\n", "not valid YAML"),
    "not a mapping": ("---\n- a\n- b\n---\n", "not a mapping"),
    "no name": ("---\ndescription: x\n---\n", "`name` is missing"),
    "a name that is a number": ("---\nname: 12\ndescription: x\n---\n", "`name` is missing or not text"),
    "upper case": ("---\nname: Bad\ndescription: x\n---\n", "lower-case letters"),
    "double hyphen": ("---\nname: b--ad\ndescription: x\n---\n", "single hyphens"),
    "leading hyphen": ("---\nname: -bad\ndescription: x\n---\n", "single hyphens"),
    "name of another folder": ("---\nname: other\ndescription: x\n---\n", "is not the folder's name 'bad'"),
    "no description": ("---\nname: bad\n---\n", "`description` is missing"),
    "blank description": ("---\nname: bad\ndescription: '  '\n---\n", "`description` is missing or empty"),
    "long description": ("---\nname: bad\ndescription: " + "x" * 1025 + "\n---\n", "over 1024 characters"),
}


@pytest.mark.parametrize("case", sorted(BAD_FRONT_MATTER))
def test_a_bad_skill_is_skipped_and_named_with_why(repo, case):
    text, reason = BAD_FRONT_MATTER[case]
    skills_dir = repo / ".iac-code" / "skills"
    skill(skills_dir, "good")
    (skills_dir / "bad").mkdir()
    (skills_dir / "bad" / "SKILL.md").write_text(text)
    catalog = find_skills(project_directories(repo), None, bundled=False)
    assert catalog.names == ["good"]
    (problem,) = catalog.problems
    assert problem.file == skills_dir / "bad" / "SKILL.md"
    assert reason in problem.reason


def test_a_64_character_name_is_accepted_and_65_is_not(repo):
    skills_dir = repo / ".iac-code" / "skills"
    skill(skills_dir, "a" * 64)
    skill(skills_dir, "b" * 65)
    catalog = find_skills(project_directories(repo), None, bundled=False)
    assert catalog.names == ["a" * 64]
    assert "at most 64 characters" in catalog.problems[0].reason


def test_a_bad_skill_is_logged_once_per_process_but_each_session_keeps_it(repo, caplog):
    skills_dir = repo / ".iac-code" / "skills"
    (skills_dir / "broken").mkdir(parents=True)
    (skills_dir / "broken" / "SKILL.md").write_text("no front matter here")
    with caplog.at_level(logging.WARNING, logger="iac_code.skills.discovery"):
        first = find_skills(project_directories(repo), None, bundled=False)
        second = find_skills(project_directories(repo), None, bundled=False)
    assert first.problems == second.problems and len(first.problems) == 1
    logged = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert logged == [f"skill skipped: {skills_dir / 'broken' / 'SKILL.md'}: {first.problems[0].reason}"]


def test_a_skill_md_that_is_a_directory_or_a_dangling_link_makes_no_skill_and_breaks_nothing(repo):
    skills_dir = repo / ".iac-code" / "skills"
    (skills_dir / "loop").mkdir(parents=True)
    (skills_dir / "loop" / "SKILL.md").mkdir()  # a directory where the file should be: not a skill at all
    (skills_dir / "dangling").mkdir()
    (skills_dir / "dangling" / "SKILL.md").symlink_to(skills_dir / "nowhere")
    assert find_skills(project_directories(repo), None, bundled=False) == find_skills(
        project_directories(repo), None, bundled=False
    )
    assert find_skills(project_directories(repo), None, bundled=False).names == []


def test_the_argument_hint_and_a_folded_description_are_read(repo):
    folder = repo / ".iac-code" / "skills" / "tag-audit"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: tag-audit\ndescription: >-\n  Checks tags.\n  Use when tagging.\nargument-hint: <dir>\n"
        "license: Apache-2.0\nmetadata:\n  owner: platform\n---\nbody\n"
    )
    (found,) = find_skills(project_directories(repo), None, bundled=False).skills
    assert found == Skill("tag-audit", "Checks tags. Use when tagging.", folder, "project", "<dir>")


def test_bundled_skills_are_all_well_formed():
    found = bundled_skills()
    assert [item for item in found if isinstance(item, SkillProblem)] == []
    assert {item.name for item in found if isinstance(item, Skill)} == {
        "terraform-module-authoring",
        "alibaba-cloud-ros",
        "cloudformation",
        "kubernetes-hardening",
        "plan-review",
    }
