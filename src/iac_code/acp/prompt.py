"""ACP prompt content blocks → the text the model reads."""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)


def prompt_text(blocks: Sequence[PromptBlock]) -> str:
    return "\n".join(_block_text(block) for block in blocks)


def _block_text(block: PromptBlock) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>'
        return f"[resource: {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, ResourceContentBlock):
        return f"[resource link: {block.name} {block.uri}]"
    # Images and audio are not sent to the model (promptCapabilities says so): a marker keeps their place.
    if isinstance(block, ImageContentBlock):
        return f"[image: {block.mime_type}]"
    return f"[audio: {block.mime_type}]"
