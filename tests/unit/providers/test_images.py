"""Images reach each model API in its own shape; the model table and the `images` setting decide who gets them."""

import pytest

from iac_code.config import ConfigError, Settings, load_settings
from iac_code.messages import Image, Message, user
from iac_code.providers.anthropic import AnthropicProvider
from iac_code.providers.images import images_enabled, model_takes_images, without_images
from iac_code.providers.lazy import LazyProvider
from iac_code.providers.openai_chat import OpenAIChatProvider

PNG = Image(
    "image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
JPEG = Image("image/jpeg", "/9j/4AAQSkZJRg==")


async def drain(provider, history):
    return [event async for event in provider.stream("sys", history, [], max_tokens=64)]


async def test_openai_gets_image_url_data_urls_then_the_text(openai_server):
    openai_server.add({"text": "I see a stack trace."})
    provider = OpenAIChatProvider("openai", "gpt-4.1", openai_server.url, "k", 128_000, max_retries=0)
    await drain(provider, [Message(role="user", text="What failed?", images=[PNG, JPEG])])
    (sent,) = [m for m in openai_server.requests[0]["messages"] if m["role"] == "user"]
    assert sent["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG.data}"}},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{JPEG.data}"}},
        {"type": "text", "text": "What failed?"},
    ]


async def test_openai_text_only_messages_keep_plain_string_content(openai_server):
    openai_server.add({"text": "ok"})
    provider = OpenAIChatProvider("openai", "gpt-4.1", openai_server.url, "k", 128_000, max_retries=0)
    await drain(provider, [user("hi")])
    assert openai_server.requests[0]["messages"][-1] == {"role": "user", "content": "hi"}


async def test_anthropic_gets_base64_image_sources_then_the_text(anthropic_server):
    anthropic_server.add({"text": "A VPC with two subnets."})
    provider = AnthropicProvider("anthropic", "claude-test", anthropic_server.url, "k", 200_000, max_retries=0)
    await drain(provider, [Message(role="user", text="Describe this diagram", images=[PNG])])
    assert anthropic_server.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG.data}},
                {"type": "text", "text": "Describe this diagram", "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4.1", True),
        ("gpt-4o-mini", True),
        ("o3-mini", False),
        ("claude-sonnet-4-5", True),
        ("anthropic/claude-sonnet-4", True),
        ("qwen3-coder-plus", False),
        ("qwen-vl-max", True),
        ("qwen2.5vl:7b", True),
        ("deepseek-chat", False),
        ("llama3.2-vision:11b", True),
        ("scripted-model", False),
    ],
)
def test_the_model_table(model, expected):
    assert model_takes_images(model) is expected


def test_the_setting_overrides_the_table_and_the_demo_has_no_images():
    assert images_enabled(Settings()) is False
    assert images_enabled(Settings(provider="openai")) is True, "the preset's default model, gpt-4.1"
    assert images_enabled(Settings(provider="deepseek")) is False
    assert images_enabled(Settings(provider="openai_compatible", model="mystery", images=True)) is True
    assert images_enabled(Settings(provider="openai", model="gpt-4.1", images=False)) is False
    assert images_enabled(Settings(provider="openai", model="gpt-4.1"), model="deepseek-chat") is False


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("0", False), ("true", True), ("off", False)])
def test_iac_code_images_from_the_environment(tmp_path, raw, expected):
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_IMAGES": raw}).images is expected


def test_images_from_config_json_and_a_bad_value(tmp_path):
    (tmp_path / "config.json").write_text('{"images": true}')
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}).images is True
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_IMAGES": "0"}).images is False
    with pytest.raises(ConfigError, match="IAC_CODE_IMAGES must be 1 or 0"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_IMAGES": "maybe"})


def test_without_images_leaves_a_marker_where_each_image_was():
    history = [Message(role="user", text="What failed?", images=[PNG, JPEG]), user("and now?")]
    stripped = without_images(history)
    assert stripped[0].images == [] and stripped[0].text == (
        "What failed?\n[image: image/png (not shown: this model does not read images)]\n"
        "[image: image/jpeg (not shown: this model does not read images)]"
    )
    assert stripped[1] is history[1] and history[0].images == [PNG, JPEG], "the stored history is unchanged"


async def test_switching_to_a_text_only_model_sends_markers_instead_of_stored_images(openai_server):
    settings = Settings(provider="openai_compatible", base_url=openai_server.url, api_key="k", model="gpt-4o")
    provider = LazyProvider(settings)
    history = [Message(role="user", text="What failed?", images=[PNG])]
    openai_server.add({"text": "the NAT gateway"}, {"text": "still the NAT gateway"})
    await drain(provider, history)
    provider.model = "deepseek-chat"  # the user picked a text-only model mid-session
    await drain(provider, history)
    first, second = (next(m for m in r["messages"] if m["role"] == "user") for r in openai_server.requests)
    assert first["content"][0]["type"] == "image_url"
    assert second["content"] == "What failed?\n[image: image/png (not shown: this model does not read images)]"
