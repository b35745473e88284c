"""The skill tool: a skill's instructions and its reference files; a reference may not leave the skill's folder
(absolute, `..`, a symlink out, a link swapped in), and loading runs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.repository import project_directories
from iac_code.skills.discovery import find_skills
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.registry import default_tools
from iac_code.tools.skill import MAX_LISTED_REFERENCES, SkillTool


@pytest.fixture
def folder(workspace: Path) -> Path:
    path = workspace / ".iac-code" / "skills" / "tagging"
    (path / "references").mkdir(parents=True)
    (path / "scripts").mkdir()
    (path / "SKILL.md").write_text(
        "---\nname: tagging\ndescription: Tag rules. Use when adding resources.\n---\n\n# Tagging\nTag with owner.\n"
    )
    (path / "references" / "aliases.md").write_text("owner: the team\ncost-center: the budget\n")
    (path / "scripts" / "check.sh").write_text("#!/bin/sh\ntouch ran\n")
    (path / "scripts" / "check.sh").chmod(0o755)
    (path / ".hidden").write_text("x")
    return path


@pytest.fixture
def tool(workspace: Path, folder: Path) -> SkillTool:
    return SkillTool(find_skills(project_directories(workspace), None, bundled=False))


async def test_loading_gives_the_body_the_folder_and_the_reference_files(tool, folder, ctx):
    result = await tool.run({"name": "tagging"}, ctx)
    assert not result.is_error
    assert result.text.startswith("# Tagging\nTag with owner.\n\nSkill folder: ")
    assert "description:" not in result.text  # the front matter is not repeated
    assert result.text.endswith(
        'Reference files (read one with skill(name="tagging", reference=PATH)):\n'
        "- references/aliases.md\n- scripts/check.sh"
    )
    assert not (folder / "ran").exists() and not (ctx.workspace / "ran").exists()


async def test_a_folder_with_many_files_lists_some_and_says_there_are_more(tool, folder, ctx):
    many = folder / "references" / "many"
    many.mkdir()
    for index in range(300):
        (many / f"{index:03d}.md").write_text("x")
    text = (await tool.run({"name": "tagging"}, ctx)).text
    listed = [line for line in text.splitlines() if line.startswith("- references/")]
    assert len(listed) == MAX_LISTED_REFERENCES and listed[:2] == [
        "- references/aliases.md",
        "- references/many/000.md",
    ]
    assert text.endswith("\n- … and more, not listed")


async def test_an_edit_to_the_body_counts_at_once(tool, folder, ctx):
    (folder / "SKILL.md").write_text("---\nname: tagging\ndescription: x\n---\nNew rules.\n")
    assert (await tool.run({"name": "tagging"}, ctx)).text.startswith("New rules.\n")


async def test_a_reference_is_read_as_numbered_lines(tool, ctx):
    result = await tool.run({"name": "tagging", "reference": "references/aliases.md"}, ctx)
    assert result.text == "     1\towner: the team\n     2\tcost-center: the budget"
    paged = await tool.run({"name": "tagging", "reference": "references/aliases.md", "offset": 2}, ctx)
    assert paged.text == "     2\tcost-center: the budget"


async def test_an_unknown_skill_names_the_known_ones(tool, ctx):
    with pytest.raises(ToolError, match="no skill named 'tags'; the skills are: tagging"):
        await tool.run({"name": "tags"}, ctx)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("../../../../outside/secret.txt", "leads outside the folder of skill 'tagging'"),
        ("references/../../tagging-other/x", "leads outside"),
        (".", "leads outside"),
        ("/etc/passwd", "must be a path relative to the folder"),
        ("missing.md", "file not found"),
        ("references", "is a directory"),
    ],
)
async def test_a_reference_that_leaves_the_folder_or_is_no_file_is_refused(tool, ctx, outside, reference, message):
    with pytest.raises(ToolError, match=message):
        await tool.run({"name": "tagging", "reference": reference}, ctx)


async def test_a_symlink_out_of_the_folder_is_refused_and_not_listed(tool, folder, ctx, outside):
    (folder / "references" / "secret.md").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="leads outside the folder"):
        await tool.run({"name": "tagging", "reference": "references/secret.md"}, ctx)
    assert "secret" not in (await tool.run({"name": "tagging"}, ctx)).text


async def test_a_symlink_inside_the_folder_is_followed(tool, folder, ctx):
    (folder / "aliases.md").symlink_to(folder / "references" / "aliases.md")
    result = await tool.run({"name": "tagging", "reference": "aliases.md"}, ctx)
    assert "owner: the team" in result.text


async def test_the_call_is_a_read_with_a_title_and_the_file_it_reads(tool, folder, ctx):
    assert tool.access({"name": "tagging", "reference": "../x"}) == "read"
    assert tool.title({"name": "tagging"}) == "Load skill tagging"
    assert tool.title({"name": "tagging", "reference": "references/aliases.md"}) == "Read tagging/references/aliases.md"
    assert tool.locations({"name": "tagging"}, ctx) == [str(folder / "SKILL.md")]
    located = tool.locations({"name": "tagging", "reference": "references/aliases.md"}, ctx)
    assert located == [str((folder / "references" / "aliases.md").resolve())]
    assert tool.locations({"name": "tagging", "reference": "/etc/passwd"}, ctx) == []
    assert tool.locations({"name": "nope"}, ctx) == []


async def test_a_body_too_long_for_the_context_is_cut_in_the_middle(tool, folder, ctx):
    (folder / "SKILL.md").write_text("---\nname: tagging\ndescription: x\n---\nSTART" + "x" * 100_000 + "END\n")
    text = (await tool.run({"name": "tagging"}, ctx)).text
    assert "START" in text and "END" in text and "characters cut" in text and len(text) < 40_000


def test_the_registry_offers_the_tool_only_with_skills(workspace, folder):
    assert "skill" not in default_tools()
    tools = default_tools(skills=find_skills(project_directories(workspace), None, bundled=False))
    assert tools["skill"].category == "read" and tools["skill"].kind == "read"


async def test_a_bundled_skill_cannot_reach_its_neighbours(ctx: ToolContext):
    tool = SkillTool(find_skills(project_directories(ctx.workspace), None))
    assert "# Reviewing a plan before apply" in (await tool.run({"name": "plan-review"}, ctx)).text
    with pytest.raises(ToolError, match="leads outside the folder of skill 'plan-review'"):
        await tool.run({"name": "plan-review", "reference": "../cloudformation/SKILL.md"}, ctx)
