"""The commands a client lists and /help shows: the session's own first, then /init and the custom ones
with their hints, then other sources; a name already taken is listed once."""

from pathlib import Path

from acp.schema import AvailableCommand

from iac_code.acp.commands import FileCommands, SessionCommand, available_commands_update, help_text
from iac_code.agent.commands import INIT


async def _nothing(session: object, arguments: str) -> None:
    return None


OWN = {"help": SessionCommand("List the commands", _nothing)}


class OtherSource:
    """A source such as MCP prompts: one command of its own, one that clashes with a file command."""

    def available(self) -> list[AvailableCommand]:
        return [
            AvailableCommand(name="mcp__tf__review", description="Review"),
            AvailableCommand(name="init", description="x"),
        ]

    async def render(self, name: str, arguments: str) -> str | None:
        return f"review {arguments}" if name == "mcp__tf__review" else None


def files(tmp_path: Path) -> FileCommands:
    commands = tmp_path / "ws" / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "plan-review.md").write_text("---\nargument-hint: <plan file>\n---\nReview a plan: $ARGUMENTS\n")
    (commands / "help.md").write_text("would hide /help\n")
    source = FileCommands(tmp_path / "ws", None, reserved=OWN)
    source.reload()
    return source


async def test_the_update_lists_every_command_in_the_official_shape(tmp_path):
    update = available_commands_update(OWN, [files(tmp_path), OtherSource()])
    assert update.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "help", "description": "List the commands"},
            {"name": "init", "description": INIT.description, "input": {"hint": INIT.hint}},
            {"name": "plan-review", "description": "Review a plan: $ARGUMENTS", "input": {"hint": "<plan file>"}},
            {"name": "mcp__tf__review", "description": "Review"},
        ],
    }


async def test_file_commands_render_their_arguments_and_know_only_their_names(tmp_path):
    source = files(tmp_path)
    assert await source.render("plan-review", "tfplan.json") == "Review a plan: tfplan.json"
    assert "AGENTS.md" in (await source.render("init", "") or "")
    assert await source.render("help", "") is None, "a reserved name is never a file command"
    assert await source.render("mcp__tf__review", "") is None


def test_help_lists_every_command_and_the_modes(tmp_path):
    text = help_text(available_commands_update(OWN, [files(tmp_path), OtherSource()]).available_commands)
    assert "  /help: List the commands" in text and "  /plan-review: Review a plan" in text
    assert "  /mcp__tf__review: Review" in text and "  bypass-permissions: " in text
