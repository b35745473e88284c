"""MCP tool results as ToolResults: the model's text, the client's ACP blocks, rawOutput."""

import base64
import json

import mcp_types as mt
from acp.schema import EmbeddedResourceContentBlock, ImageContentBlock, ResourceContentBlock

from iac_code.mcp.results import tool_result
from iac_code.tools.base import MAX_OUTPUT_CHARS

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 2044).decode()


def test_text_blocks_are_the_models_text_and_the_raw_output_is_the_mcp_result():
    result = tool_result(
        mt.CallToolResult(content=[mt.TextContent(type="text", text="a"), mt.TextContent(type="text", text="b")])
    )
    assert result.text == "a\nb"
    assert not result.is_error
    assert result.content == []
    assert result.raw_output["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    json.dumps(result.raw_output)  # plain JSON


def test_an_image_is_a_marker_for_the_model_and_an_acp_image_for_the_client():
    result = tool_result(mt.CallToolResult(content=[mt.ImageContent(type="image", data=PNG, mime_type="image/png")]))
    assert result.text == "[image: image/png, 2.0 KB]"
    assert result.content == [ImageContentBlock(type="image", data=PNG, mime_type="image/png")]
    assert result.raw_output["content"][0]["data"] == "<2.0 KB omitted>"  # it is in content already


def test_resources_and_links():
    text = mt.TextResourceContents(uri="file:///w/main.tf", text='resource "x" "y" {}', mime_type="text/plain")
    blob = mt.BlobResourceContents(uri="file:///w/plan.bin", blob=PNG, mime_type="application/octet-stream")
    link = mt.ResourceLink(type="resource_link", uri="file:///w/state", name="state", mime_type="application/json")
    result = tool_result(
        mt.CallToolResult(
            content=[
                mt.EmbeddedResource(type="resource", resource=text),
                mt.EmbeddedResource(type="resource", resource=blob),
                link,
            ]
        )
    )
    assert result.text.splitlines() == [
        "[resource file:///w/main.tf]",
        'resource "x" "y" {}',
        "[resource file:///w/plan.bin: application/octet-stream, 2.0 KB]",
        "[resource link: state file:///w/state (application/json)]",
    ]
    kinds = [type(block) for block in result.content]
    assert kinds == [EmbeddedResourceContentBlock, EmbeddedResourceContentBlock, ResourceContentBlock]
    assert result.content[0].resource.text == 'resource "x" "y" {}'
    assert result.content[2].uri == "file:///w/state"
    assert result.raw_output["content"][1]["resource"]["blob"] == "<2.0 KB omitted>"


def test_structured_content_is_added_unless_a_text_block_already_says_it():
    structured = {"buckets": ["logs"], "count": 1}
    alone = tool_result(mt.CallToolResult(content=[], structured_content=structured))
    assert json.loads(alone.text) == structured
    both = tool_result(
        mt.CallToolResult(
            content=[mt.TextContent(type="text", text=json.dumps(structured))], structured_content=structured
        )
    )
    assert both.text == json.dumps(structured)
    wrapped = tool_result(
        mt.CallToolResult(
            content=[mt.TextContent(type="text", text="eu-west")], structured_content={"result": "eu-west"}
        )
    )
    assert wrapped.text == "eu-west"
    assert both.raw_output["structuredContent"] == structured


def test_is_error_makes_an_error_result_even_without_text():
    assert tool_result(mt.CallToolResult(content=[mt.TextContent(type="text", text="quota")], is_error=True)).is_error
    empty = tool_result(mt.CallToolResult(content=[], is_error=True))
    assert empty.is_error and empty.text == "The MCP tool reported an error."
    assert tool_result(mt.CallToolResult(content=[])).text == "(no output)"


def test_huge_text_is_cut_in_the_middle():
    text = "h" * MAX_OUTPUT_CHARS + "t" * MAX_OUTPUT_CHARS
    result = tool_result(mt.CallToolResult(content=[mt.TextContent(type="text", text=text)]))
    assert len(result.text) < MAX_OUTPUT_CHARS + 100
    assert result.text.startswith("h") and result.text.endswith("t") and "characters cut" in result.text
