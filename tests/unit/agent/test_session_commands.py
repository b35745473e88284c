"""The commands a session lists and /help shows: its own first, then /init and the custom ones with their
hints, then other sources (the skills); a name already taken is listed once."""

from pathlib import Path

import pytest

from iac_code.agent.commands import INIT
from iac_code.agent.session_commands import (
    CommandError,
    CommandInfo,
    FileCommands,
    SessionCommand,
    SkillCommands,
    help_text,
    listed,
)
from iac_code.repository import project_directories
from iac_code.skills.discovery import find_skills


async def _nothing(session: object, arguments: str) -> None:
    return None


OWN = {"help": SessionCommand("List the commands", _nothing)}


class OtherSource:
    """A source of prompt commands: one command of its own, one that clashes with a file command."""

    def available(self) -> list[CommandInfo]:
        return [CommandInfo("review", "Review"), CommandInfo("init", "x")]

    async def render(self, name: str, arguments: str) -> str | None:
        return f"review {arguments}" if name == "review" else None


def files(tmp_path: Path) -> FileCommands:
    commands = tmp_path / "ws" / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "plan-review.md").write_text("---\nargument-hint: <plan file>\n---\nReview a plan: $ARGUMENTS\n")
    (commands / "help.md").write_text("would hide /help\n")
    source = FileCommands(tmp_path / "ws", None, reserved=OWN)
    source.reload()
    return source


def test_every_command_is_listed_once_in_order(tmp_path):
    more = [CommandInfo("mcp__tf__review", "Review (MCP server tf)"), CommandInfo("help", "shadowed")]
    assert listed(OWN, [files(tmp_path), OtherSource()], more) == [
        CommandInfo("help", "List the commands"),
        CommandInfo("init", INIT.description, INIT.hint),
        CommandInfo("plan-review", "Review a plan: $ARGUMENTS", "<plan file>"),
        CommandInfo("review", "Review"),
        CommandInfo("mcp__tf__review", "Review (MCP server tf)"),
    ]


async def test_file_commands_render_their_arguments_and_know_only_their_names(tmp_path):
    source = files(tmp_path)
    assert await source.render("plan-review", "tfplan.json") == "Review a plan: tfplan.json"
    assert "AGENTS.md" in (await source.render("init", "") or "")
    assert await source.render("help", "") is None, "a reserved name is never a file command"
    assert await source.render("review", "") is None


def test_help_lists_every_command_and_the_modes(tmp_path):
    text = help_text(listed(OWN, [files(tmp_path), OtherSource()]))
    assert "  /help: List the commands" in text and "  /plan-review: Review a plan" in text
    assert "  /review: Review" in text and "  bypass-permissions: " in text


def skills(tmp_path: Path, body: str = "# Tagging\nTag with owner.") -> SkillCommands:
    skills_dir = tmp_path / "ws" / ".agents" / "skills"
    for name in ("tagging", "help", "init"):
        (skills_dir / name).mkdir(parents=True)
        (skills_dir / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} rules\n---\n{body}\n")
    (skills_dir / "broken").mkdir()
    (skills_dir / "broken" / "SKILL.md").write_text("no front matter")
    return SkillCommands(find_skills(project_directories(tmp_path / "ws"), None, bundled=False), reserved=OWN)


def test_skills_are_commands_except_the_names_of_the_session_and_init(tmp_path):
    assert skills(tmp_path).available() == [CommandInfo("tagging", "tagging rules", "what to apply it to (optional)")]


async def test_a_skill_command_sends_its_instructions_and_the_request(tmp_path):
    source = skills(tmp_path)
    folder = tmp_path / "ws" / ".agents" / "skills" / "tagging"
    rendered = await source.render("tagging", " modules/vpc ")
    assert rendered == (
        f'The user runs the skill "tagging" (its folder: {folder}; the `skill` tool reads its reference files). '
        "Its instructions:\n\n# Tagging\nTag with owner.\n\nThe user's request: modules/vpc"
    )
    bare = await source.render("tagging", "")
    assert bare is not None and bare.endswith(
        "The user's request: (none given: apply the skill to this workspace as its instructions say)"
    )
    assert await source.render("help", "") is None and await source.render("init", "") is None


async def test_arguments_in_a_skill_body_take_the_request_in_place(tmp_path):
    rendered = await skills(tmp_path, "Tag $ARGUMENTS with owner.").render("tagging", "modules/vpc")
    assert rendered is not None and rendered.endswith("Its instructions:\n\nTag modules/vpc with owner.")


async def test_a_skill_whose_file_went_away_fails_as_a_command(tmp_path):
    source = skills(tmp_path)
    (tmp_path / "ws" / ".agents" / "skills" / "tagging" / "SKILL.md").unlink()
    with pytest.raises(CommandError, match="/tagging: .*SKILL.md cannot be read"):
        await source.render("tagging", "")


def test_the_skipped_skills_are_told_once(tmp_path):
    source = skills(tmp_path)
    (told,) = source.untold_problems()
    assert "broken/SKILL.md: no front matter" in str(told)
    assert source.untold_problems() == ()
