"""Prompt commands: `/init` and the user's own slash commands, each a prompt template run as a normal turn.

Custom commands are Markdown files: `<config dir>/commands/NAME.md` for every project, and the
workspace's `.iac-code/commands/NAME.md`, which wins over a user command of the same name. Optional
front matter gives a `description` and an `argument-hint`; without a description, the first line of
the body is used. `$ARGUMENTS` in the body is replaced by what the user typed after the command
(appended when the body does not ask for it, so nothing typed is lost).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

PROJECT_COMMANDS_DIR = Path(".iac-code") / "commands"
USER_COMMANDS_DIR = "commands"  # under the config dir
MAX_COMMAND_FILE_BYTES = 64 * 1024
MAX_DESCRIPTION_CHARS = 100
ARGUMENTS = "$ARGUMENTS"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_INVOCATION = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+(.*))?", re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class CustomCommand:
    name: str  # typed as /name
    description: str
    template: str  # the prompt, with $ARGUMENTS where the user's arguments go
    hint: str = ""  # what to type after the command, e.g. "<module path>"
    source: Path | None = None  # the file it came from; None for the built-in /init


INIT_PROMPT = """\
Write an AGENTS.md at the root of this workspace that tells an engineer (or an agent like you) what
they need to know to work on this repository's infrastructure. First explore: list the files, read the
IaC sources, CI configuration, Makefiles and READMEs. Then describe, briefly and concretely:
- the infrastructure-as-code tools and their versions (Terraform/OpenTofu, ROS, CloudFormation,
  Kubernetes manifests, Helm charts) and the cloud providers, accounts and regions they target;
- the layout: modules, environments, stacks, where state lives (backends) and how environments differ;
- how to format, validate, lint and plan changes (the exact commands), and how changes are applied
  (CI/CD pipelines, manual steps);
- the conventions to keep: naming, tagging, variables and outputs, secrets handling, provider pinning.
Keep it under about 150 lines and state only what you found in the repository. If an AGENTS.md already
exists, improve it rather than replacing what it says. Write the file with the file tools (the user is
asked before anything is written); do not run commands that change real infrastructure.
$ARGUMENTS"""

INIT = CustomCommand(
    name="init",
    description="Write an AGENTS.md describing this repository's infrastructure",
    template=INIT_PROMPT,
    hint="what to focus on (optional)",
)


def load_commands(workspace: Path, config_dir: Path | None, *, reserved: Collection[str] = ()) -> list[CustomCommand]:
    """`/init`, then the user's and the project's commands sorted by name; the project's win a name clash.

    Names in `reserved` (the session's own commands, e.g. clear) are skipped: those always mean the
    built-in. Unreadable, oversized or badly named files are skipped with a log line.
    """
    found: dict[str, CustomCommand] = {INIT.name: INIT}
    directories = [config_dir / USER_COMMANDS_DIR] if config_dir is not None else []
    directories.append(workspace / PROJECT_COMMANDS_DIR)
    for directory in directories:
        for command in _commands_in(directory):
            if command.name not in reserved:
                found[command.name] = command
    return [found[INIT.name], *sorted((c for c in found.values() if c.name != INIT.name), key=lambda c: c.name)]


def parse_invocation(text: str) -> tuple[str, str] | None:
    """`("name", "arguments")` when the prompt is a slash command (`/name arguments`), else None."""
    match = _INVOCATION.fullmatch(text.strip())
    return (match.group(1), (match.group(2) or "").strip()) if match else None


def render(command: CustomCommand, arguments: str) -> str:
    """The prompt the model gets for `/name arguments`."""
    arguments = arguments.strip()
    if ARGUMENTS in command.template:
        return command.template.replace(ARGUMENTS, arguments).strip()
    return f"{command.template.strip()}\n\n{arguments}" if arguments else command.template.strip()


def _commands_in(directory: Path) -> list[CustomCommand]:
    try:
        files = sorted(path for path in directory.glob("*.md") if path.is_file())
    except OSError:
        return []
    commands = []
    for path in files:
        command = _read_command(path)
        if command is not None:
            commands.append(command)
    return commands


def _read_command(path: Path) -> CustomCommand | None:
    if not _NAME.fullmatch(path.stem):
        log.warning("command file %s skipped: its name must be letters, digits, - and _", path)
        return None
    try:
        if path.stat().st_size > MAX_COMMAND_FILE_BYTES:
            log.warning("command file %s skipped: over %d KiB", path, MAX_COMMAND_FILE_BYTES // 1024)
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        log.warning("command file %s skipped: %s", path, exc)
        return None
    fields, body = _split_front_matter(text.replace("\r\n", "\n"))
    description = fields.get("description") or _first_line(body) or f"Run {path.name}"
    return CustomCommand(
        name=path.stem,
        description=description[:MAX_DESCRIPTION_CHARS],
        template=body,
        hint=fields.get("argument-hint", ""),
        source=path,
    )


def _split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """`key: value` lines between leading `---` fences (the common subset of YAML front matter)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    fields = {}
    for line in match.group(1).splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields, text[match.end() :]


def _first_line(body: str) -> str:
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return line.lstrip("#").strip()
