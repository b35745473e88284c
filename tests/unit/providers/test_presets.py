"""build_provider and available_models: settings to providers, and the errors that name what to set."""

import json

import pytest

from iac_code.config import ConfigError, Settings
from iac_code.providers.anthropic import AnthropicProvider
from iac_code.providers.base import TextDelta, ToolCallReady
from iac_code.providers.demo import DemoProvider
from iac_code.providers.openai_chat import OpenAIChatProvider
from iac_code.providers.presets import DEMO_NOTICE, PRESETS, available_models, build_provider, context_window_for
from iac_code.providers.scripted import ScriptedProvider


async def test_no_provider_gives_the_demo_with_its_notice():
    provider = build_provider(Settings())
    assert isinstance(provider.inner, DemoProvider)
    events = [e async for e in provider.stream("", [], [], max_tokens=10)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith(DEMO_NOTICE)
    [call] = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert call.name == "list_files"  # it looks before it writes


def test_scripted_needs_a_script(tmp_path):
    with pytest.raises(ConfigError, match="IAC_CODE_SCRIPT"):
        build_provider(Settings(provider="scripted"))
    with pytest.raises(ConfigError, match="IAC_CODE_SCRIPT"):
        build_provider(Settings(provider="scripted", script=str(tmp_path / "nope.json")))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [{"text": "hi"}]}))
    provider = build_provider(Settings(provider="scripted", script=str(script), context_window=5000))
    assert isinstance(provider.inner, ScriptedProvider) and provider.context_window == 5000


def test_unknown_provider_lists_the_choices():
    with pytest.raises(ConfigError) as caught:
        build_provider(Settings(provider="nonsense"))
    assert str(caught.value).startswith("unknown provider 'nonsense': set IAC_CODE_PROVIDER to one of ")
    assert "dashscope" in str(caught.value) and "anthropic_compatible" in str(caught.value)


def test_missing_key_names_both_variables():
    with pytest.raises(ConfigError) as caught:
        build_provider(Settings(provider="openai"))
    assert str(caught.value) == "no API key for provider 'openai': set IAC_CODE_API_KEY or OPENAI_API_KEY"


def test_key_from_the_preset_variable_and_preset_defaults():
    provider = build_provider(Settings(provider="dashscope", env={"DASHSCOPE_API_KEY": "k"}))
    assert isinstance(provider.inner, OpenAIChatProvider)
    assert provider.base_url == PRESETS["dashscope"].base_url and provider.model == PRESETS["dashscope"].default_model
    assert provider.context_window == context_window_for(provider.model)


def test_other_providers_keys_are_not_borrowed():
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        build_provider(Settings(provider="deepseek", env={"OPENAI_API_KEY": "k"}))


@pytest.mark.parametrize("name", ["openai_compatible", "anthropic_compatible"])
def test_compatible_providers_need_a_base_url(name):
    with pytest.raises(ConfigError, match="IAC_CODE_BASE_URL"):
        build_provider(Settings(provider=name, api_key="k", model="m"))


def test_compatible_without_model_names_iac_code_model():
    with pytest.raises(ConfigError, match="IAC_CODE_MODEL"):
        build_provider(Settings(provider="vllm"))


def test_settings_override_preset():
    settings = Settings(
        provider="anthropic_compatible",
        base_url="http://127.0.0.1:9/anthropic",
        model="kimi-k2",
        api_key="k",
        context_window=32000,
    )
    provider = build_provider(settings)
    assert isinstance(provider.inner, AnthropicProvider)
    assert (provider.model, provider.base_url, provider.context_window) == (
        "kimi-k2",
        "http://127.0.0.1:9/anthropic",
        32000,
    )


def test_local_servers_need_no_key_and_aliases_resolve():
    assert isinstance(build_provider(Settings(provider="ollama")).inner, OpenAIChatProvider)
    assert build_provider(Settings(provider="Bailian", api_key="k")).name == "dashscope"


def test_context_window_lookup():
    assert context_window_for("claude-sonnet-4-5") == 200_000
    assert context_window_for("qwen3-coder-plus") == 1_000_000
    assert context_window_for("some-unknown-model") == 128_000


def test_available_models():
    assert available_models(Settings(provider="deepseek", model="deepseek-reasoner")) == [
        "deepseek-reasoner",
        "deepseek-chat",
    ]
    assert available_models(Settings(provider="openai", model="my-fine-tune"))[:2] == ["my-fine-tune", "gpt-4.1"]
    assert available_models(Settings()) == ["demo"]
    assert available_models(Settings(provider="vllm", model="served")) == ["served"]


async def test_built_provider_talks_to_a_compatible_server(openai_server):
    openai_server.add({"text": "from the fake"})
    provider = build_provider(
        Settings(provider="openai_compatible", base_url=openai_server.url, model="scripted-model")
    )
    events = [e async for e in provider.stream("", [], [], max_tokens=10)]
    assert TextDelta("from the fake") in events
    assert openai_server.requests[0]["max_tokens"] == 10
