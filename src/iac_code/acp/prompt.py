"""ACP prompt content blocks → the user message the model reads (text and images), and back for replay.

Text and embedded text resources become text. Images reach the model when it reads them (checked here,
so a bad image is refused with the prompt rather than failing every later turn of the session once it
is in the history); otherwise, like audio, they leave a marker. A `resource_link` to a file inside the
workspace (the cwd or an additional directory) is read and included (bounded); any other link is mentioned
as a link. The blocks themselves are kept with the message (as JSON, an attached image as the model gets it),
so that session/load shows the prompt as it was sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from pydantic import ValidationError

from iac_code.errors import InvalidParams
from iac_code.image_data import UnusableImage, checked_image
from iac_code.messages import Image, Message
from iac_code.tools.base import ToolError
from iac_code.tools.workspace import Roots, resolve_in_workspace

logger = logging.getLogger(__name__)

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
_JSON: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_none": True}
_PROMPT_BLOCKS: dict[str, type[PromptBlock]] = {
    "text": TextContentBlock,
    "image": ImageContentBlock,
    "audio": AudioContentBlock,
    "resource_link": ResourceContentBlock,
    "resource": EmbeddedResourceContentBlock,
}

MAX_LINKED_FILE_BYTES = 256 * 1024  # what one read_file call returns; the model pages on with read_file
_SNIFF_BYTES = 8192


async def user_message(blocks: Sequence[PromptBlock], workspace: Roots, *, images: bool) -> Message:
    """The user message for a prompt. `images`: whether the session's model reads images.

    Raises InvalidParams naming the block (`{"prompt[2]": reason}`) for an image
    that cannot be sent: too large, not base64, or not PNG/JPEG/GIF/WebP.
    """
    parts: list[str] = []
    attached: list[Image] = []
    sent: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        sent.append(block.model_dump(**_JSON))
        if isinstance(block, ImageContentBlock) and images and block.data:
            attached.append(_image(index, block))
            sent[-1].update(mimeType=attached[-1].mime_type, data=attached[-1].data)  # stored once, as the model's
        elif isinstance(block, ResourceContentBlock):
            parts.append(await asyncio.to_thread(_linked_resource, block, workspace))
        else:
            parts.append(_block_text(block))
    return Message(role="user", text="\n".join(parts), images=attached, blocks=sent)


def user_blocks(message: Message) -> list[PromptBlock]:
    """What the user sent, as content blocks again (for `user_message_chunk`s on session/load): the prompt's
    blocks as they came, or for a message stored without them (older sessions, a command's) its text and images."""
    if message.blocks:
        try:
            return [_PROMPT_BLOCKS[block["type"]].model_validate(block) for block in message.blocks]
        except (KeyError, ValidationError) as exc:  # a store edited by hand, say: its text still shows
            logger.warning("a stored prompt's blocks are unreadable (%s); showing its text", type(exc).__name__)
    blocks: list[PromptBlock] = []
    if message.text:
        blocks.append(TextContentBlock(type="text", text=message.text))
    blocks += [ImageContentBlock(type="image", mime_type=i.mime_type, data=i.data) for i in message.images]
    return blocks


def _block_text(block: PromptBlock) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return _resource_text(resource.uri, resource.text)
        return f"[resource: {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, ResourceContentBlock):
        return _link(block)
    # Images for a model that does not read them, and audio (no model here hears it): a marker keeps their place.
    if isinstance(block, ImageContentBlock):
        return f"[image: {block.mime_type}]"
    return f"[audio: {block.mime_type}]"


def _resource_text(uri: str, text: str) -> str:
    return f'<resource uri="{uri}">\n{text}\n</resource>'


def _link(block: ResourceContentBlock) -> str:
    return f"[resource link: {block.name} {block.uri}]"


def _image(index: int, block: ImageContentBlock) -> Image:
    try:
        return checked_image(block.data, block.mime_type)
    except UnusableImage as exc:
        advice = ": send a smaller or more compressed image" if exc.too_large else ""
        raise InvalidParams(f"prompt[{index}]", f"{exc}{advice}") from None


def _linked_resource(block: ResourceContentBlock, workspace: Roots) -> str:
    """A workspace file's text (its head when large); anything else stays a link for the model."""
    path = _workspace_file(block.uri, workspace)
    if path is None:
        return _link(block)
    try:
        with path.open("rb") as file:
            data = file.read(MAX_LINKED_FILE_BYTES + 1)
    except OSError:
        return _link(block)
    if b"\0" in data[:_SNIFF_BYTES]:
        return _link(block)
    text = data[:MAX_LINKED_FILE_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_LINKED_FILE_BYTES:
        text += f"\n[… cut at {MAX_LINKED_FILE_BYTES // 1024} KiB: read the rest with read_file]"
    return _resource_text(block.uri, text)


def _workspace_file(uri: str, workspace: Roots) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    try:
        path = resolve_in_workspace(workspace, unquote(parsed.path))
    except ToolError:
        return None
    return path if path.is_file() else None
