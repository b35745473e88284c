"""Slash commands (`/name arguments` sent as a prompt): what a client may list, and what runs.

Two kinds, looked up in this order:
- session commands act on the session itself (`/compact`, `/clear`, `/help`, `/check`, `/status`): a `SessionCommand`
  in the session's registry (`COMMANDS` in session.py: one entry adds one);
- prompt commands render the prompt of a normal turn (the prompt's images are kept): `/init` and the
  Markdown commands (`FileCommands`, from commands.py), the skills (`SkillCommands`: `/<skill> request`,
  which win over a Markdown command of the same name), then any other `PromptCommands` source a session
  is given (`session.prompt_commands.append(source)`). The first source that knows a name renders it.
  MCP prompts (`/mcp__<server>__<prompt>`) are rendered by the session's MCP wiring (session_mcp.py).
A name that is neither is no command: the text goes to the model as typed.

Commands are described as neutral data (`CommandInfo`); each face shows them its own way (ACP's
`available_commands_update`, the headless `/help` text).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from iac_code.agent.commands import ARGUMENTS, INIT, CustomCommand, load_commands, render
from iac_code.agent.events import TurnEnd
from iac_code.agent.policy import MODES
from iac_code.skills.discovery import SkillCatalog
from iac_code.skills.skill_file import SkillFileError, SkillProblem, read_body

S = TypeVar("S")
SKILLS_TITLE = "skills"  # of the notices of skills skipped


class CommandError(Exception):
    """A command that cannot run as typed; its message is shown to the user and the turn ends."""


@dataclass(frozen=True)
class CommandInfo:
    """A command as a client lists it."""

    name: str  # typed as /name
    description: str
    hint: str = ""  # what to type after the command, for the client's input field


@dataclass(frozen=True)
class SessionCommand(Generic[S]):
    description: str
    # (the session, the text typed after the command) → the turn it ran, if it ran one
    run: Callable[[S, str], Awaitable[TurnEnd | None]]
    hint: str = ""


class PromptCommands(Protocol):
    """A set of commands that each become the prompt of a normal turn."""

    def available(self) -> list[CommandInfo]:
        """The commands, as the client lists them."""
        ...

    async def render(self, name: str, arguments: str) -> str | None:
        """The prompt for `/name arguments`; None when `name` is not one of these. Raises CommandError."""
        ...


class FileCommands:
    """`/init` and the Markdown commands of the user's config dir and the workspace (commands.py),
    read again by `reload()` each time the session announces its commands."""

    def __init__(self, workspace: Path, config_dir: Path | None, reserved: Collection[str]) -> None:
        self._workspace = workspace
        self._config_dir = config_dir
        self._reserved = reserved
        self._commands: dict[str, CustomCommand] = {}

    def reload(self) -> None:
        found = load_commands(self._workspace, self._config_dir, reserved=self._reserved)
        self._commands = {command.name: command for command in found}

    def available(self) -> list[CommandInfo]:
        return [CommandInfo(c.name, c.description, c.hint) for c in self._commands.values()]

    async def render(self, name: str, arguments: str) -> str | None:
        command = self._commands.get(name)
        return None if command is None else render(command, arguments)


class SkillCommands:
    """Each skill as `/<name> request`: the prompt is the skill's instructions (read now) and the request, the
    way the `skill` tool would have loaded them. `$ARGUMENTS` in the instructions takes the request, as in a
    Markdown command. A skill named like a session command or /init is left to those."""

    def __init__(self, catalog: SkillCatalog, reserved: Collection[str]) -> None:
        self._skills = {skill.name: skill for skill in catalog.skills if skill.name not in {*reserved, INIT.name}}
        self._untold = catalog.problems

    def untold_problems(self) -> tuple[SkillProblem, ...]:
        """The skills skipped for their problems, the first time; none afterwards."""
        problems, self._untold = self._untold, ()
        return problems

    def available(self) -> list[CommandInfo]:
        return [
            CommandInfo(skill.name, skill.description, skill.hint or "what to apply it to (optional)")
            for skill in self._skills.values()
        ]

    async def render(self, name: str, arguments: str) -> str | None:
        skill = self._skills.get(name)
        if skill is None:
            return None
        try:
            body = await asyncio.to_thread(read_body, skill)
        except SkillFileError as exc:
            raise CommandError(f"/{name}: {exc}") from None
        instructions = (
            f'The user runs the skill "{name}" (its folder: {skill.folder}; the `skill` tool reads its reference '
            f"files). Its instructions:\n\n{body}"
        )
        if ARGUMENTS in body:
            return instructions.replace(ARGUMENTS, arguments.strip())
        request = arguments.strip() or "(none given: apply the skill to this workspace as its instructions say)"
        return f"{instructions}\n\nThe user's request: {request}"


def listed(
    session_commands: Mapping[str, SessionCommand[S]],
    sources: Sequence[PromptCommands],
    more: Iterable[CommandInfo] = (),
) -> list[CommandInfo]:
    """The session's own commands first, then each source's, then `more` (a name already listed is skipped)."""
    own = [CommandInfo(name, command.description, command.hint) for name, command in session_commands.items()]
    found: dict[str, CommandInfo] = {}
    for command in itertools.chain(own, *(source.available() for source in sources), more):
        found.setdefault(command.name, command)
    return list(found.values())


def help_text(commands: Sequence[CommandInfo]) -> str:
    """What /help shows: `commands` (those the session lists) and the modes."""
    lines = ["Commands:"]
    lines += [f"  /{command.name}: {command.description}" for command in commands]
    lines += ["Modes:"]
    lines += [f"  {mode.id}: {mode.description}" for mode in MODES]
    return "\n".join(lines)


def status_text(mode: str, model: str, guard: str, mcp_servers: Mapping[str, str]) -> str:
    """What /status shows: the session's mode and model, what guards the commands it runs against
    infrastructure changes (guard/), and its MCP servers with their states."""
    servers = ", ".join(f"{name} ({state})" for name, state in sorted(mcp_servers.items())) or "none"
    return "\n".join([f"Mode: {mode}", f"Model: {model}", f"Infrastructure guard: {guard}", f"MCP servers: {servers}"])
