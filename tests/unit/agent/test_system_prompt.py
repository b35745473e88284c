from datetime import date

from iac_code.agent.system_prompt import MAX_INSTRUCTION_CHARS, build_system_prompt


def test_prompt_names_the_workspace_date_and_iac_focus(tmp_path):
    prompt = build_system_prompt(tmp_path, today=date(2026, 11, 30))
    assert str(tmp_path) in prompt and "2026-11-30" in prompt
    for tool in ("Terraform", "ROS", "CloudFormation", "Kubernetes"):
        assert tool in prompt


def test_project_instructions_are_included_agents_md_first(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Always tag resources with owner=platform.")
    (tmp_path / "IAC-CODE.md").write_text("Second choice.")
    prompt = build_system_prompt(tmp_path)
    assert "owner=platform" in prompt and "Second choice" not in prompt


def test_iac_code_md_is_used_when_there_is_no_agents_md(tmp_path):
    (tmp_path / "IAC-CODE.md").write_text("Use OpenTofu, not Terraform.")
    assert "Use OpenTofu" in build_system_prompt(tmp_path)


def test_a_huge_instructions_file_is_capped(tmp_path):
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_INSTRUCTION_CHARS * 3))
    prompt = build_system_prompt(tmp_path)
    assert "[… truncated]" in prompt and len(prompt) < MAX_INSTRUCTION_CHARS + 5_000
