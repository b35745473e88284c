"""Image payloads the model APIs accept, checked once before they enter a conversation.

An image the API refuses (too large, not base64, a type it does not read, or a `mime_type` that does
not match the bytes) would fail every later turn of the session once it is in the history, so images
from the user's prompts (acp/prompt.py) and from MCP tools (mcp/results.py) are checked here first.
"""

from __future__ import annotations

import base64
import binascii

from iac_code.messages import Image

# Base64 characters per image: Anthropic's per-image limit (OpenAI allows 20 MB), so one limit fits both.
MAX_IMAGE_DATA_CHARS = 5 * 1024 * 1024
MODEL_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")

# What the model APIs accept, recognised by the data itself: clients and servers are not always right
# about mimeType.
_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


class UnusableImage(ValueError):
    """Why an image cannot go to the model, as a phrase for the user ("image data is not valid base64")."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.too_large = too_large


def checked_image(data: str, declared_type: str | None) -> Image:
    """The image as the model will get it (base64 without line breaks, its real type), or
    UnusableImage saying why not."""
    data = "".join(data.split())  # some clients wrap base64 lines
    if len(data) > MAX_IMAGE_DATA_CHARS:
        raise UnusableImage(
            f"image is {len(data) / 2**20:.1f} MiB as base64; the limit is {MAX_IMAGE_DATA_CHARS // 2**20} MiB",
            too_large=True,
        )
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise UnusableImage("image data is not valid base64") from None
    mime_type = sniff_image_type(decoded[:16])
    if mime_type is None:
        raise UnusableImage(f"image data ({declared_type or 'no type'}) is not a PNG, JPEG, GIF or WebP image")
    return Image(mime_type=mime_type, data=data)


def sniff_image_type(head: bytes) -> str | None:
    """The type of an image from its first bytes, among those the model APIs read; None for others."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _SIGNATURES.items() if head.startswith(magic)), None)
