"""The commands a session lists and /help shows: its own first, then /init and the custom ones with their
hints, then other sources; a name already taken is listed once."""

from pathlib import Path

from iac_code.agent.commands import INIT
from iac_code.agent.session_commands import CommandInfo, FileCommands, SessionCommand, help_text, listed


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
