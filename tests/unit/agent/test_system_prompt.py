from datetime import date
from pathlib import Path

from tests.unit.agent.fakes import workspace_at

from iac_code.agent.system_prompt import MAX_INSTRUCTION_CHARS, MAX_SKILL_LIST_CHARS, build_system_prompt, skill_list
from iac_code.skills.discovery import SkillCatalog
from iac_code.skills.skill_file import Skill


def test_prompt_names_the_workspace_date_and_iac_focus(tmp_path):
    prompt = build_system_prompt(workspace_at(tmp_path), today=date(2026, 11, 30))
    assert str(tmp_path) in prompt and "2026-11-30" in prompt
    for tool in ("Terraform", "ROS", "CloudFormation", "Kubernetes"):
        assert tool in prompt


def test_project_instructions_are_included_agents_md_first(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Always tag resources with owner=platform.")
    (tmp_path / "IAC-CODE.md").write_text("Second choice.")
    prompt = build_system_prompt(workspace_at(tmp_path))
    assert "owner=platform" in prompt and "Second choice" not in prompt


def test_iac_code_md_is_used_when_there_is_no_agents_md(tmp_path):
    (tmp_path / "IAC-CODE.md").write_text("Use OpenTofu, not Terraform.")
    assert "Use OpenTofu" in build_system_prompt(workspace_at(tmp_path))


def test_a_huge_instructions_file_is_capped(tmp_path):
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_INSTRUCTION_CHARS * 3))
    prompt = build_system_prompt(workspace_at(tmp_path))
    assert "[… truncated]" in prompt and len(prompt) < MAX_INSTRUCTION_CHARS + 5_000


def test_instructions_come_from_the_repository_root_down_to_the_workspace_nearest_last(tmp_path):
    repo = tmp_path / "repo"
    workspace = repo / "envs" / "prod"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPOSITORY")
    (repo / "AGENTS.md").write_text("ROOT: use OpenTofu")
    (repo / "envs" / "IAC-CODE.md").write_text("ENVS: one state per environment")
    (workspace / "AGENTS.md").write_text("PROD: deletion protection on")
    config = tmp_path / "config"
    config.mkdir()
    (config / "AGENTS.md").write_text("USER: answer in British English")
    prompt = build_system_prompt(workspace_at(workspace, config_dir=config), config_dir=config)
    assert "ABOVE THE REPOSITORY" not in prompt
    order = [prompt.index(marker) for marker in ("USER:", "ROOT:", "ENVS:", "PROD:")]
    assert order == sorted(order)
    assert "Instructions from ../../AGENTS.md:" in prompt and "Instructions from ../IAC-CODE.md:" in prompt
    assert f"{config / 'AGENTS.md'} (your own, for every project)" in prompt


def test_outside_a_repository_only_the_workspace_file_is_read(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "AGENTS.md").write_text("PARENT")
    (workspace / "AGENTS.md").write_text("OWN")
    prompt = build_system_prompt(workspace_at(workspace))
    assert "OWN" in prompt and "PARENT" not in prompt


def test_the_cap_covers_all_files_and_the_nearest_keeps_its_share(tmp_path):
    (tmp_path / ".git").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "AGENTS.md").write_text("R" * MAX_INSTRUCTION_CHARS)
    (workspace / "AGENTS.md").write_text("W" * (MAX_INSTRUCTION_CHARS // 2))
    prompt = build_system_prompt(workspace_at(workspace))
    assert prompt.count("W") >= MAX_INSTRUCTION_CHARS // 2
    assert prompt.count("R") < MAX_INSTRUCTION_CHARS // 2 + 100 and "[… truncated]" in prompt


def test_the_model_is_told_to_keep_a_plan(tmp_path):
    assert "update_plan" in build_system_prompt(workspace_at(tmp_path))


def _catalog(*descriptions: str) -> SkillCatalog:
    skills = tuple(
        Skill(f"skill-{index}", text, Path(f"/skills/skill-{index}"), "project")
        for index, text in enumerate(descriptions)
    )
    return SkillCatalog(skills)


def test_skills_are_listed_by_name_and_description_with_how_to_load_them(tmp_path):
    prompt = build_system_prompt(workspace_at(tmp_path, skills=_catalog("Tag rules. Use when adding resources.")))
    assert "call the `skill` tool with\nits name" in prompt
    assert prompt.endswith("\n- skill-0: Tag rules. Use when adding resources.")


def test_no_skills_no_skill_section(tmp_path):
    assert "`skill` tool" not in build_system_prompt(workspace_at(tmp_path, skills=SkillCatalog()))


def test_the_skill_list_is_bounded_the_nearest_keep_their_place_and_the_rest_are_counted(tmp_path):
    catalog = _catalog(*(f"Description number {index}. " + "x" * 300 for index in range(10)))
    listed = skill_list(catalog)
    lines = listed.splitlines()
    entries = [line for line in lines if line.startswith("- skill-")]
    assert [line.split(":")[0] for line in entries] == [f"- skill-{index}" for index in range(len(entries))]
    assert len(listed) <= MAX_SKILL_LIST_CHARS
    assert 0 < len(entries) < 10
    assert lines[-1] == f"({10 - len(entries)} more skills left out of this list for space.)"
    assert listed in build_system_prompt(workspace_at(tmp_path, skills=catalog))


def test_skills_that_fit_exactly_are_all_listed_without_a_note(tmp_path):
    heading = skill_list(SkillCatalog()).rstrip()
    room = MAX_SKILL_LIST_CHARS - len(heading) - 1 - len("- skill-0: ")
    listed = skill_list(_catalog("x" * room))
    assert len(listed) == MAX_SKILL_LIST_CHARS and "left out" not in listed
    assert skill_list(_catalog("x" * (room + 1))).endswith("\n(1 more skill left out of this list for space.)")


def test_the_skill_list_is_the_same_from_one_build_to_the_next(tmp_path):
    catalog = _catalog("a. Use when a.", "b. Use when b.")
    assert skill_list(catalog) == skill_list(catalog)
    day = date(2026, 12, 1)
    assert build_system_prompt(workspace_at(tmp_path, skills=catalog), today=day) == build_system_prompt(
        workspace_at(tmp_path, skills=catalog), today=day
    )
