"""An MCP `CallToolResult` as the project's ToolResult: text for the model, blocks for the client
(messages.py's neutral Image / Audio / Resource; acp/presenter.py makes them ACP content).

- text blocks become the model's text;
- images and audio reach the client as image/audio blocks. An image the model APIs accept (PNG,
  JPEG, GIF or WebP, checked by its bytes, within `image_data.MAX_IMAGE_DATA_CHARS` of base64 for the
  whole result) also goes to the model, in `ToolResult.images`, and leaves no mark in the text (a model
  that does not read images gets a marker in its place from providers/images.py). Any other image, and
  audio, leaves a marker line saying why it was not sent ("[image: image/svg+xml, 1.2 KB: not sent to
  the model: …]");
- an embedded resource reaches the client as it came (a Resource holding the MCP block's JSON); the
  model gets its text (or a marker for a binary one);
- a resource link reaches the client as it came too; the model gets a line naming it;
- `structuredContent` is added to the model's text as JSON unless a text block already says the
  same (the spec asks servers to send both);
- `isError` makes the result an error; `raw_output` is the MCP result as JSON, with binary payloads
  replaced by their size (they are in `content` already, and raw output may be stored).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types

from iac_code.image_data import MAX_IMAGE_DATA_CHARS, MODEL_IMAGE_TYPES, UnusableImage, checked_image
from iac_code.messages import Audio, Block, Image, Resource
from iac_code.tools.base import MAX_OUTPUT_CHARS, ToolResult


class ModelImages:
    """The images of one result (or rendered prompt) for the model, within one MAX_IMAGE_DATA_CHARS budget."""

    def __init__(self) -> None:
        self.images: list[Image] = []
        self._budget = MAX_IMAGE_DATA_CHARS  # base64 characters of images the model may still get

    def add(self, block: mcp_types.ImageContent) -> str:
        """Take the image for the model: "" when taken, else the marker line saying why it is not sent."""
        image = _model_image(block, self._budget)
        if isinstance(image, str):
            return image
        self.images.append(image)
        self._budget -= len(image.data)
        return ""


def tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    texts: list[str] = []
    blocks: list[Block] = []
    model_images = ModelImages()
    for block in result.content:
        if isinstance(block, mcp_types.ImageContent):
            blocks.append(Image(block.mime_type, block.data))
            if marker := model_images.add(block):
                texts.append(marker)
            continue
        text, client_block = _convert(block)
        if text:
            texts.append(text)
        if client_block is not None:
            blocks.append(client_block)
    structured = result.structured_content
    if structured is not None and not any(_same_json(text, structured) for text in texts):
        texts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    text = "\n".join(texts)
    images = model_images.images
    if not text and not images:
        text = "The MCP tool reported an error." if result.is_error else "(no output)"
    return ToolResult(
        _clip(text),
        is_error=bool(result.is_error),
        raw_output=_raw_output(result),
        content=blocks,
        images=images,
    )


def _model_image(block: mcp_types.ImageContent, budget: int) -> Image | str:
    """The image for the model, or the marker line saying why it is not sent."""
    described = f"image: {block.mime_type}, {_size(block.data)}"
    if block.mime_type not in MODEL_IMAGE_TYPES:
        return f"[{described}; not sent to the model: it reads only PNG, JPEG, GIF and WebP]"
    try:
        image = checked_image(block.data, block.mime_type)
    except UnusableImage as exc:
        return f"[{described}; not sent to the model: {exc}]"
    if len(image.data) > budget:
        limit = MAX_IMAGE_DATA_CHARS // 2**20
        return f"[{described}; not sent to the model: this result's images pass the {limit} MiB limit]"
    return image


def content_text(block: mcp_types.ContentBlock) -> str:
    """What the model reads for one MCP content block (prompt messages use it too)."""
    return _convert(block)[0]


def _convert(block: Any) -> tuple[str, Block | None]:
    if isinstance(block, mcp_types.TextContent):
        return block.text, None
    if isinstance(block, mcp_types.AudioContent):
        return f"[audio: {block.mime_type}, {_size(block.data)}]", Audio(block.mime_type, block.data)
    if isinstance(block, mcp_types.EmbeddedResource):
        return _resource_text(block.resource), Resource(_as_json(block))
    if isinstance(block, mcp_types.ResourceLink):
        described = f" ({block.mime_type})" if block.mime_type else ""
        return f"[resource link: {block.name} {block.uri}{described}]", Resource(_as_json(block))
    return f"[{getattr(block, 'type', 'unknown')} content not shown]", None


def _resource_text(resource: Any) -> str:
    uri, mime = str(resource.uri), resource.mime_type
    if isinstance(resource, mcp_types.TextResourceContents):
        return f"[resource {uri}]\n{resource.text}"
    return f"[resource {uri}: {mime or 'binary'}, {_size(resource.blob)}]"


def _as_json(block: mcp_types.EmbeddedResource | mcp_types.ResourceLink) -> dict[str, Any]:
    dumped: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _same_json(text: str, value: Any) -> bool:
    """Whether a text block already carries `value`, as JSON or as the {"result": …} wrapper the
    Python SDK puts around a tool's plain return value."""
    if isinstance(value, dict) and list(value) == ["result"] and value["result"] == text:
        return True
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data) * 3 // 4
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KB"


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    return f"{text[:half]}\n\n[... {len(text) - 2 * half:,} characters cut ...]\n\n{text[-half:]}"


def _raw_output(result: mcp_types.CallToolResult) -> dict[str, Any]:
    """The result's JSON, with each content block's base64 payload replaced by a note of its size."""
    raw: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    for block in raw.get("content", []):
        if block.get("type") in ("image", "audio") and isinstance(block.get("data"), str):
            block["data"] = f"<{_size(block['data'])} omitted>"
        resource = block.get("resource")
        if isinstance(resource, dict) and isinstance(resource.get("blob"), str):
            resource["blob"] = f"<{_size(resource['blob'])} omitted>"
    return raw
