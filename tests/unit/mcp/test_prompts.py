"""Prompts as slash commands: the hint, how typed text fills the arguments, and the rendered text."""

import mcp_types as mt
import pytest

from iac_code.mcp.prompts import PromptError, prompt_command, render


def _command(*arguments: tuple[str, bool]):
    prompt = mt.Prompt(
        name="p", description="Do it", arguments=[mt.PromptArgument(name=n, required=r) for n, r in arguments]
    )
    return prompt_command("mcp__s__p", "s", prompt)


def test_the_command_names_the_server_and_hints_the_arguments():
    command = _command(("left", True), ("right", False))
    assert command.name == "mcp__s__p"
    assert command.description == "Do it (MCP server s)"
    assert command.hint == "<left> [right=…]"
    assert _command().hint == ""
    assert _command(("a", False), ("b", True)).hint == "[a] b=…"


def test_one_argument_takes_the_whole_text_as_typed():
    command = _command(("resource", True))
    assert command.arguments_for("  aws_s3_bucket.logs  with 'quotes' and x=1 ") == (
        {"resource": "aws_s3_bucket.logs  with 'quotes' and x=1"},
        "",
    )


def test_named_words_set_their_argument_and_the_rest_goes_to_the_first_unset_one():
    command = _command(("left", True), ("right", False))
    assert command.arguments_for("cn-beijing right=cn-shanghai") == ({"left": "cn-beijing", "right": "cn-shanghai"}, "")
    assert command.arguments_for('right="cn shanghai" left=eu') == ({"left": "eu", "right": "cn shanghai"}, "")
    assert command.arguments_for("cn-beijing") == ({"left": "cn-beijing"}, "")
    assert command.arguments_for("right=x some words") == ({"left": "some words", "right": "x"}, "")


def test_a_missing_required_argument_shows_the_usage():
    with pytest.raises(PromptError, match=r"needs left\. Usage: /mcp__s__p <left> \[right=…\]"):
        _command(("left", True), ("right", False)).arguments_for("right=x")
    with pytest.raises(PromptError, match="unexpected text"):
        _command(("a", False)).arguments_for("a=1 more")


def test_a_prompt_without_arguments_keeps_the_typed_text_for_after_it():
    assert _command().arguments_for(" and be brief ") == ({}, "and be brief")


def test_render_joins_messages_and_labels_non_user_ones():
    result = mt.GetPromptResult(
        messages=[
            mt.PromptMessage(role="user", content=mt.TextContent(type="text", text="Review main.tf")),
            mt.PromptMessage(role="assistant", content=mt.TextContent(type="text", text="Which aspects?")),
            mt.PromptMessage(
                role="user",
                content=mt.EmbeddedResource(
                    type="resource", resource=mt.TextResourceContents(uri="file:///w/main.tf", text="x = 1")
                ),
            ),
        ]
    )
    rendered = render(result, "be brief")
    assert rendered.text == (
        "Review main.tf\n\n[assistant]\nWhich aspects?\n\n[resource file:///w/main.tf]\nx = 1\n\nbe brief"
    )
    assert rendered.images == []


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_render_takes_the_images_a_model_reads_and_marks_the_others():
    def image(mime: str, data: str) -> mt.PromptMessage:
        return mt.PromptMessage(role="user", content=mt.ImageContent(type="image", data=data, mime_type=mime))

    result = mt.GetPromptResult(
        messages=[image("image/png", PNG), image("image/svg+xml", "PHN2Zz4="), image("image/png", "bm90IGEgcG5n")]
    )
    rendered = render(result)
    assert [(i.mime_type, i.data) for i in rendered.images] == [("image/png", PNG)]
    first, second = rendered.text.split("\n\n")
    assert first.startswith("[image: image/svg+xml") and "reads only PNG, JPEG, GIF and WebP" in first
    assert second.startswith("[image: image/png") and "not sent to the model" in second
