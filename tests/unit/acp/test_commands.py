"""A session's commands in the official `available_commands_update` shape: a hint only where there is one."""

from iac_code.acp.commands import available_commands_update
from iac_code.agent.session_commands import CommandInfo


def test_the_update_lists_every_command_in_the_official_shape():
    update = available_commands_update([CommandInfo("help", "List the commands"), CommandInfo("init", "Init", "why")])
    assert update.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "help", "description": "List the commands"},
            {"name": "init", "description": "Init", "input": {"hint": "why"}},
        ],
    }
