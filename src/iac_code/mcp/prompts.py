"""MCP prompts as slash commands: `/mcp__<server>__<prompt> args`.

How the text after the command fills the prompt's arguments:
- `name=value` words whose name is one of the prompt's arguments set that argument (quote values
  with spaces: `right="cn shanghai"`);
- the rest of the text, as typed, goes to the first argument not set by name;
- a prompt without arguments takes no text: anything typed is added after the rendered prompt;
- a required argument left empty is an error that shows the usage.

So a one-argument prompt takes the whole text (`/mcp__tf__review aws_s3_bucket.logs`), and a
longer one its first argument positionally and the others by name (`/mcp__x__compare cn-beijing
right=cn-shanghai`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from iac_code.messages import Image

if TYPE_CHECKING:  # the SDK's types load with the SDK, off the event loop (see hub.py)
    import mcp_types


class PromptError(Exception):
    """The command's text does not fit the prompt, or the server could not render it (for the user)."""


@dataclass(frozen=True)
class PromptCommand:
    name: str  # the slash command, without "/"
    server: str
    prompt: str  # the prompt's name on its server
    description: str
    arguments: tuple[mcp_types.PromptArgument, ...]

    @property
    def hint(self) -> str:
        """E.g. `<left> [right=…]`: the first argument positional, the others by name."""
        words = []
        for index, argument in enumerate(self.arguments):
            word = f"<{argument.name}>" if index == 0 else f"{argument.name}=…"
            if not argument.required:
                word = f"[{argument.name}]" if index == 0 else f"[{word}]"
            words.append(word)
        return " ".join(words)

    def arguments_for(self, text: str) -> tuple[dict[str, str], str]:
        """(the prompt's arguments, text left over to add after it) for what followed the command."""
        text = text.strip()
        if not self.arguments:
            return {}, text
        names = {argument.name for argument in self.arguments}
        named, rest = _named_words(text, names)
        values = dict(named)
        if rest:
            target = next((a.name for a in self.arguments if a.name not in values), None)
            if target is None:
                raise PromptError(f"/{self.name}: every argument was given by name; unexpected text {rest!r}")
            values[target] = rest
        missing = [a.name for a in self.arguments if a.required and not values.get(a.name)]
        if missing:
            raise PromptError(f"/{self.name} needs {', '.join(missing)}. Usage: /{self.name} {self.hint}")
        return values, ""


def prompt_command(name: str, server: str, prompt: mcp_types.Prompt) -> PromptCommand:
    description = prompt.description or prompt.title or f"Prompt {prompt.name}"
    return PromptCommand(
        name=name,
        server=server,
        prompt=prompt.name,
        description=f"{description} (MCP server {server})",
        arguments=tuple(prompt.arguments or ()),
    )


@dataclass(frozen=True)
class RenderedPrompt:
    text: str  # its messages in order, non-user ones labelled by role
    images: list[Image]  # its images the model may take (see results.ModelImages), in order


def render(result: mcp_types.GetPromptResult, extra: str = "") -> RenderedPrompt:
    """A rendered prompt as one user message: text, and the images it carries for the model."""
    import mcp_types  # loaded with the SDK by then

    from iac_code.mcp.results import ModelImages, content_text

    parts = []
    model_images = ModelImages()
    for message in result.messages:
        content = message.content
        text = model_images.add(content) if isinstance(content, mcp_types.ImageContent) else content_text(content)
        parts.append(text if message.role == "user" or not text else f"[{message.role}]\n{text}")
    if extra:
        parts.append(extra)
    return RenderedPrompt("\n\n".join(part for part in parts if part), model_images.images)


def _named_words(text: str, names: set[str]) -> tuple[dict[str, str], str]:
    """`name=value` words naming a known argument, and the other text (as typed when there were none)."""
    try:
        words = shlex.split(text)
    except ValueError:  # an apostrophe in free text: no named words then
        return {}, text
    named: dict[str, str] = {}
    others: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in names and key not in named:
            named[key] = value
        else:
            others.append(word)
    return named, (" ".join(others) if named else text)
