"""Provider presets and `build_provider`: from Settings to a ready ModelProvider.

Only a preset's own key variable is read for it (e.g. OPENAI_API_KEY for `openai`): the
`*_compatible` presets point at user-chosen URLs, so they take IAC_CODE_API_KEY only, and no
well-known key is ever sent to a third-party endpoint by accident.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from iac_code.config import ConfigError, Settings
from iac_code.preload import prepare_in_background
from iac_code.providers.base import ModelProvider
from iac_code.providers.cache_marks import CacheTtl
from iac_code.providers.demo import DemoProvider
from iac_code.providers.encodable_output import EncodableOutput
from iac_code.providers.prices import PriceTable, price_table
from iac_code.providers.scripted import ScriptedProvider
from iac_code.providers.sdk_extras import without_unused_extras

DEMO_NOTICE = (
    "[iac-code demo] No model is configured, so this is a scripted demo. Set IAC_CODE_PROVIDER "
    "(e.g. openai, dashscope, deepseek, anthropic, ollama) and IAC_CODE_API_KEY, optionally "
    "IAC_CODE_MODEL / IAC_CODE_BASE_URL, to use a real model."
)
DEMO_MODEL = "demo"
DEFAULT_CONTEXT_WINDOW = 128_000


@dataclass(frozen=True)
class Preset:
    kind: Literal["openai", "anthropic", "scripted"]
    base_url: str = ""  # empty: the user must give IAC_CODE_BASE_URL
    default_model: str = ""  # empty: the user must give IAC_CODE_MODEL
    models: tuple[str, ...] = ()  # offered in the client's model picker
    key_env: str = ""  # the provider's usual key variable, read when IAC_CODE_API_KEY is unset
    needs_key: bool = True
    max_tokens_field: str = "max_tokens"
    # Sends `prompt_cache_key` (a hash of the session): only where the API is known to take it, since an
    # unknown field may be refused by a strict compatible server (IAC_CODE_PROMPT_CACHE_KEY overrides).
    cache_key: bool = False
    cache_marked_models: tuple[str, ...] = ()  # id prefixes of models with explicit `cache_control` caching


PRESETS: dict[str, Preset] = {
    "openai": Preset(
        "openai",
        "https://api.openai.com/v1",
        "gpt-4.1",
        ("gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o4-mini", "gpt-5"),
        "OPENAI_API_KEY",
        max_tokens_field="max_completion_tokens",
        cache_key=True,
    ),
    "dashscope": Preset(
        "openai",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen3-coder-plus",
        ("qwen3-coder-plus", "qwen-max", "qwen-plus", "qwen-turbo", "qwen3-235b-a22b"),
        "DASHSCOPE_API_KEY",
        # Model Studio's explicit cache (reads at 10% of the input price, not the implicit cache's 20%)
        cache_marked_models=("qwen3-coder-plus", "qwen3-coder-flash", "qwen3-max", "qwen-plus", "qwen-flash"),
    ),
    "deepseek": Preset(
        "openai",
        "https://api.deepseek.com/v1",
        "deepseek-chat",
        ("deepseek-chat", "deepseek-reasoner"),
        "DEEPSEEK_API_KEY",
    ),
    "openrouter": Preset(
        "openai",
        "https://openrouter.ai/api/v1",
        "anthropic/claude-sonnet-4",
        ("anthropic/claude-sonnet-4", "openai/gpt-4.1", "qwen/qwen3-coder", "deepseek/deepseek-chat"),
        "OPENROUTER_API_KEY",
    ),
    "openai_compatible": Preset("openai", needs_key=False),
    "ollama": Preset(
        "openai",
        "http://localhost:11434/v1",
        "qwen2.5-coder:7b",
        ("qwen2.5-coder:7b", "qwen3:8b", "llama3.1:8b"),
        needs_key=False,
    ),
    "lmstudio": Preset(
        "openai",
        "http://localhost:1234/v1",
        "qwen2.5-coder-7b-instruct",
        ("qwen2.5-coder-7b-instruct",),
        needs_key=False,
    ),
    "vllm": Preset("openai", "http://localhost:8000/v1", needs_key=False),
    "anthropic": Preset(
        "anthropic",
        "https://api.anthropic.com",
        "claude-sonnet-4-5",
        ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "claude-sonnet-4-0"),
        "ANTHROPIC_API_KEY",
    ),
    "anthropic_compatible": Preset("anthropic", needs_key=False),
    "scripted": Preset("scripted", needs_key=False),
}

ALIASES = {"bailian": "dashscope", "qwen": "dashscope", "lm_studio": "lmstudio"}

# Longest matching prefix wins; anything unknown gets DEFAULT_CONTEXT_WINDOW.
CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "anthropic/claude": 200_000,
    "qwen3-coder-plus": 1_000_000,
    "qwen-turbo": 1_000_000,
    "qwen-plus": 131_072,
    "qwen-max": 32_768,
    "deepseek": 128_000,
    "llama3.1": 128_000,
}


def canonical_name(provider: str) -> str:
    name = provider.strip().lower().replace("-", "_")
    return ALIASES.get(name, name)


def context_window_for(model: str) -> int:
    """The model's context window in tokens, by longest known prefix of its id."""
    name = model.strip().lower()
    matches = [prefix for prefix in CONTEXT_WINDOWS if name.startswith(prefix)]
    return CONTEXT_WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_WINDOW


def demo_provider() -> DemoProvider:
    text = resources.files("iac_code.providers").joinpath("demo_script.json").read_text(encoding="utf-8")
    return DemoProvider(json.loads(text)["steps"], model=DEMO_MODEL, notice=DEMO_NOTICE)


SIGNED_OUT = "signed out: sign in again (ACP authenticate), and set IAC_CODE_API_KEY if no key is stored"


def check_settings(settings: Settings) -> None:
    """Raise the ConfigError build_provider would, for everything that can be checked without
    importing a model SDK (a scripted provider's script is only read when it is built)."""
    if settings.signed_out:
        raise ConfigError(SIGNED_OUT)
    if not settings.provider:
        return
    name = canonical_name(settings.provider)
    preset = _preset(name, settings.provider)
    if preset.kind == "scripted":
        if not settings.script:
            raise ConfigError("provider 'scripted' needs a script: set IAC_CODE_SCRIPT to a JSON file of replies")
        return
    if not (settings.base_url or preset.base_url):
        raise ConfigError(f"no base URL for provider '{name}': set IAC_CODE_BASE_URL")
    if not (settings.model or preset.default_model):
        raise ConfigError(f"no model for provider '{name}': set IAC_CODE_MODEL")
    if preset.needs_key and not _api_key(settings, preset):
        raise ConfigError(f"no API key for provider '{name}': set IAC_CODE_API_KEY or {preset.key_env}")
    price_table(settings, _cache_ttl(settings))  # a malformed `prices` entry is found at start-up


def build_provider(settings: Settings) -> ModelProvider:
    """The provider the settings ask for. Raises ConfigError naming what to set when they are incomplete.

    Its output is made encodable (lone surrogates replaced) before anything else sees it."""
    return EncodableOutput(_build_provider(settings))


def _build_provider(settings: Settings) -> ModelProvider:
    check_settings(settings)
    if not settings.provider:
        return demo_provider()
    name = canonical_name(settings.provider)
    preset = PRESETS[name]
    if preset.kind == "scripted":
        return _scripted(settings)
    base_url = settings.base_url or preset.base_url
    model = settings.model or preset.default_model
    api_key = _api_key(settings, preset)
    context_window = settings.context_window or context_window_for(model)
    # The SDKs are imported only when used: together they add seconds to start-up, which the
    # offline demo and scripted runs should not pay.
    _prepare(preset.kind)  # the typed imports below then find it loaded, and the clients their TLS context
    if preset.kind == "anthropic":
        from iac_code.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            name, model, base_url, api_key, context_window, key_env=preset.key_env, cache_ttl=_cache_ttl(settings)
        )
    from iac_code.providers.openai_chat import OpenAIChatProvider

    return OpenAIChatProvider(
        name,
        model,
        base_url,
        api_key,
        context_window,
        key_env=preset.key_env,
        max_tokens_field=preset.max_tokens_field,
        sends_cache_key=preset.cache_key if settings.prompt_cache_key is None else settings.prompt_cache_key,
        cache_marked_models=preset.cache_marked_models,
    )


def session_prices(settings: Settings) -> PriceTable:
    """The prices a session's calls are costed at (at the configured cache TTL)."""
    return price_table(settings, _cache_ttl(settings))


def _cache_ttl(settings: Settings) -> CacheTtl:
    ttl = settings.cache_ttl.strip().lower()
    if ttl == "5m":
        return "5m"
    if ttl == "1h":
        return "1h"
    raise ConfigError(f"IAC_CODE_CACHE_TTL must be 5m or 1h, got {settings.cache_ttl!r}")


def warm_up(settings: Settings) -> None:
    """Start preparing the configured provider in a background thread: importing its SDK and building
    the TLS context its clients share.

    The anthropic SDK takes about a second to import here, the openai SDK half that; a server calls
    this once it is up and idle, so the first prompt does not pay for it (or only for what is left).
    A build meanwhile simply waits for the import to finish.
    """
    preset = PRESETS.get(canonical_name(settings.provider)) if settings.provider else None
    if preset is None or preset.kind == "scripted":
        return
    kind = preset.kind
    prepare_in_background(f"import {_PROVIDER_MODULES[kind]}", lambda: _prepare(kind))


_PROVIDER_MODULES = {"anthropic": "iac_code.providers.anthropic", "openai": "iac_code.providers.openai_chat"}


def _prepare(kind: Literal["openai", "anthropic"]) -> None:
    """Import the provider module of `kind`, and so its SDK, then build the TLS context its clients share,
    without the SDK's unused extras (sdk_extras.py). Here, not in the first request's client: that runs on
    the event loop, and the context's first build imports httpx2's connection pool (httpcore2), which
    would pick up trio, and reads the CA bundle (~60 ms)."""
    with without_unused_extras():
        importlib.import_module(_PROVIDER_MODULES[kind])
        from iac_code.providers.clients import tls_context  # loaded by the provider module

        tls_context()


def available_models(settings: Settings) -> list[str]:
    """Model ids for the client's picker: the current one first, then the preset's known ones."""
    if not settings.provider:
        return [DEMO_MODEL]
    preset = PRESETS.get(canonical_name(settings.provider))
    if preset is None:
        return [settings.model] if settings.model else []
    current = settings.model or preset.default_model or ("scripted" if preset.kind == "scripted" else "")
    return list(dict.fromkeys(m for m in (current, *preset.models) if m))


def _preset(name: str, given: str) -> Preset:
    preset = PRESETS.get(name)
    if preset is None:
        choices = ", ".join(PRESETS)
        raise ConfigError(f"unknown provider '{given}': set IAC_CODE_PROVIDER to one of {choices}")
    return preset


def _api_key(settings: Settings, preset: Preset) -> str:
    return settings.api_key or (settings.env.get(preset.key_env, "") if preset.key_env else "")


def _scripted(settings: Settings) -> ScriptedProvider:
    try:
        provider = ScriptedProvider.from_file(settings.script, model=settings.model or "scripted")
    except ValueError as exc:
        raise ConfigError(f"IAC_CODE_SCRIPT: {exc}") from None
    if settings.context_window:
        provider.context_window = settings.context_window
    return provider
