"""Slash commands as the client lists them (`available_commands_update`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from iac_code.agent.commands import CustomCommand


def available_commands_update(
    builtin: Mapping[str, str], prompt_commands: Sequence[CustomCommand]
) -> AvailableCommandsUpdate:
    """The session's own commands (name → description) first, then `/init` and the custom ones."""
    commands = [AvailableCommand(name=name, description=text) for name, text in builtin.items()]
    commands += [_available(command) for command in prompt_commands if command.name not in builtin]
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)


def _available(command: CustomCommand) -> AvailableCommand:
    hint = AvailableCommandInput(root=UnstructuredCommandInput(hint=command.hint)) if command.hint else None
    return AvailableCommand(name=command.name, description=command.description, input=hint)
