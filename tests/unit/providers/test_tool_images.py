"""Images a tool returned (an MCP screenshot, a diagram) reach each model API in its own shape, and a model
that does not read images gets a marker instead."""

from iac_code.config import Settings
from iac_code.messages import Image, Message, ToolCall, tool_result, user
from iac_code.providers.anthropic import AnthropicProvider, to_anthropic_messages
from iac_code.providers.lazy import LazyProvider
from iac_code.providers.openai_chat import OpenAIChatProvider, to_openai_messages

PNG = Image(
    "image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
JPEG = Image("image/jpeg", "/9j/4AAQSkZJRg==")
DIAGRAM = ToolCall("call_1", "mcp__docs__diagram", {})
SHOT = ToolCall("call_2", "mcp__browser__screenshot", {"url": "http://console"})
PLAIN = ToolCall("call_3", "read_file", {"path": "main.tf"})


def history() -> list[Message]:
    return [
        user("show me"),
        Message("assistant", tool_calls=[DIAGRAM, PLAIN, SHOT]),
        tool_result(DIAGRAM, "The diagram:", images=[PNG]),
        tool_result(PLAIN, "resource {}"),
        tool_result(SHOT, "", images=[PNG, JPEG]),
        user("and?"),
    ]


def data_url(image: Image) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def test_openai_tool_messages_stay_text_and_one_user_message_after_them_carries_the_images():
    messages = to_openai_messages("", history())
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "tool", "user", "user"]
    diagram, plain, shot = messages[2:5]
    assert diagram == {"role": "tool", "tool_call_id": "call_1", "content": "The diagram:"}
    assert plain["content"] == "resource {}"
    assert shot["content"] == "(the result is an image: it follows the tool results)"
    assert messages[5]["content"] == [
        {"type": "text", "text": "The tool call call_1 (mcp__docs__diagram) returned an image:"},
        data_url(PNG),
        {"type": "text", "text": "The tool call call_2 (mcp__browser__screenshot) returned 2 images:"},
        data_url(PNG),
        data_url(JPEG),
    ]
    assert messages[6] == {"role": "user", "content": "and?"}


def test_openai_images_of_the_last_tool_results_close_the_history():
    messages = to_openai_messages("sys", history()[:5])
    assert messages[-1]["role"] == "user" and messages[-1]["content"][1] == data_url(PNG)


def test_anthropic_tool_results_with_images_are_lists_of_blocks():
    messages = to_anthropic_messages(history())
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG.data}}
    jpeg = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": JPEG.data}}
    assert messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [{"type": "text", "text": "The diagram:"}, image],
            },
            {"type": "tool_result", "tool_use_id": "call_3", "content": "resource {}"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": [image, jpeg]},
            {"type": "text", "text": "and?"},
        ],
    }


async def test_both_apis_accept_the_translated_history(openai_server, anthropic_server):
    """The scripted servers check the tool pairing as the real APIs do."""
    openai_server.add({"text": "a VPC"})
    anthropic_server.add({"text": "a VPC"})
    openai = OpenAIChatProvider("openai", "gpt-4.1", openai_server.url, "k", 128_000, max_retries=0)
    claude = AnthropicProvider("anthropic", "claude-test", anthropic_server.url, "k", 200_000, max_retries=0)
    for provider in (openai, claude):
        events = [e async for e in provider.stream("sys", history(), [], max_tokens=64)]
        assert events, provider.name
    assert len(openai_server.requests) == len(anthropic_server.requests) == 1


async def test_a_text_only_model_or_the_images_setting_turns_tool_images_into_markers(openai_server):
    for settings in (
        Settings(provider="openai_compatible", base_url=openai_server.url, api_key="k", model="deepseek-chat"),
        Settings(provider="openai_compatible", base_url=openai_server.url, api_key="k", model="gpt-4o", images=False),
    ):
        openai_server.add({"text": "ok"})
        provider = LazyProvider(settings)
        _ = [e async for e in provider.stream("sys", history(), [], max_tokens=64)]
    for request in openai_server.requests:
        shot = next(m for m in request["messages"] if m.get("tool_call_id") == "call_2")
        assert shot["content"] == "[image: image/png (not shown: this model does not read images)]\n" + (
            "[image: image/jpeg (not shown: this model does not read images)]"
        )
        assert "image_url" not in str(request["messages"])
