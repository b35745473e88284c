"""Which models read images: a table by model family, overridable by the `images` setting.

The answer decides `promptCapabilities.image` at `initialize` and whether a prompt's image blocks reach
the model or become a marker. A model that does not take images answers an image with HTTP 400, and a
persisted image would then fail every later turn of the session, so unknown models count as text-only
until the user says otherwise (`IAC_CODE_IMAGES=1`).

This module stays free of SDK imports: the stdio handshake reads it before anything heavy is loaded.
"""

from __future__ import annotations

from iac_code.config import Settings

# Model id prefixes (lower case, any "vendor/" routing prefix removed), longest match wins.
# Only families whose image input is documented are listed as True; listing a text-only member of a
# vision family (o3-mini under o3) keeps it text-only.
MODEL_FAMILIES: dict[str, bool] = {
    # OpenAI
    "gpt-4o": True,
    "gpt-4.1": True,
    "gpt-4.5": True,
    "gpt-4-turbo": True,
    "gpt-5": True,
    "o1": True,
    "o1-mini": False,
    "o3": True,
    "o3-mini": False,
    "o4-mini": True,
    "chatgpt-4o": True,
    # Anthropic: every Claude 3 and later model reads images
    "claude": True,
    # Alibaba DashScope / Qwen: the VL and omni lines do, the coder and text lines do not
    "qwen-vl": True,
    "qwen2-vl": True,
    "qwen2.5-vl": True,
    "qwen2.5vl": True,
    "qwen3-vl": True,
    "qvq": True,
    "qwen-omni": True,
    "qwen2.5-omni": True,
    "qwen3-omni": True,
    # Google, Mistral, Meta and local vision models served through OpenAI-compatible endpoints
    "gemini": True,
    "gemma3": True,
    "pixtral": True,
    "mistral-small-3.1": True,
    "mistral-medium": True,
    "llama-4": True,
    "llama3.2-vision": True,
    "llava": True,
    "minicpm-v": True,
    "moondream": True,
    "grok-4": True,
    # DeepSeek's chat and reasoner models are text-only
    "deepseek": False,
}


def model_takes_images(model: str) -> bool:
    """Whether the table lists `model`'s family as reading images (unknown: no)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in MODEL_FAMILIES if name.startswith(prefix)]
    return MODEL_FAMILIES[max(matches, key=len)] if matches else False


def images_enabled(settings: Settings, model: str = "") -> bool:
    """Whether prompts to `model` (default: the configured one) may carry images.

    The `images` setting wins; with no model configured (the offline demo) there is nothing to show
    an image to.
    """
    if settings.images is not None:
        return settings.images
    if not settings.model_configured:
        return False
    return model_takes_images(model or settings.model or _default_model(settings.provider))


def _default_model(provider: str) -> str:
    # Imported here: presets pulls in the scripted provider, which the handshake does not otherwise need.
    from iac_code.providers.presets import PRESETS, canonical_name

    preset = PRESETS.get(canonical_name(provider))
    return preset.default_model if preset else ""
