"""The commands a client lists: the session's own first, then /init and the custom ones with their hints."""

from iac_code.acp.commands import available_commands_update
from iac_code.agent.commands import INIT, CustomCommand


def test_the_update_lists_every_command_in_the_official_shape():
    custom = CustomCommand("plan-review", "Review a plan", "Review $ARGUMENTS", hint="<plan file>")
    shadow = CustomCommand("help", "would hide /help", "x")
    update = available_commands_update({"help": "List the commands"}, [INIT, custom, shadow])
    assert update.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "help", "description": "List the commands"},
            {"name": "init", "description": INIT.description, "input": {"hint": INIT.hint}},
            {"name": "plan-review", "description": "Review a plan", "input": {"hint": "<plan file>"}},
        ],
    }
