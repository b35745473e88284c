"""A session's slash commands (agent/session_commands.py) as ACP lists them."""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from iac_code.agent.session_commands import CommandInfo


def available_commands_update(commands: Sequence[CommandInfo]) -> AvailableCommandsUpdate:
    return AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=[_available(c) for c in commands]
    )


def _available(command: CommandInfo) -> AvailableCommand:
    hint = command.hint
    command_input = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=command.name, description=command.description, input=command_input)
