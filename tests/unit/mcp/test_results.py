"""MCP tool results as ToolResults: the model's text, the client's blocks (as the server gave them), rawOutput."""

import base64
import json

import mcp_types as mt

from iac_code.image_data import MAX_IMAGE_DATA_CHARS
from iac_code.mcp.results import tool_result
from iac_code.messages import Audio, Image, Resource
from iac_code.tools.base import MAX_OUTPUT_CHARS

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 2040).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 60).decode()


def test_text_blocks_are_the_models_text_and_the_raw_output_is_the_mcp_result():
    result = tool_result(
        mt.CallToolResult(content=[mt.TextContent(type="text", text="a"), mt.TextContent(type="text", text="b")])
    )
    assert result.text == "a\nb"
    assert not result.is_error
    assert result.content == []
    assert result.raw_output["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    json.dumps(result.raw_output)  # plain JSON


def test_an_image_goes_to_the_model_without_a_marker_and_to_the_client():
    result = tool_result(
        mt.CallToolResult(
            content=[mt.TextContent(type="text", text="The diagram:"), _image(PNG, "image/png")],
        )
    )
    assert result.text == "The diagram:"
    assert result.images == [Image(mime_type="image/png", data=PNG)]
    assert result.content == [Image(mime_type="image/png", data=PNG)]
    assert result.raw_output["content"][1]["data"] == "<2.0 KB omitted>"  # it is in content already


def test_an_image_alone_is_the_whole_result_and_its_type_is_read_from_its_bytes():
    result = tool_result(mt.CallToolResult(content=[_image(JPEG, "image/png")]))  # the server got the type wrong
    assert result.text == ""
    assert result.images == [Image(mime_type="image/jpeg", data=JPEG)]


def test_images_the_model_cannot_take_stay_markers_that_say_why():
    svg = base64.b64encode(b"<svg/>").decode()
    not_an_image = base64.b64encode(b"BM a bitmap").decode()
    result = tool_result(
        mt.CallToolResult(
            content=[_image(svg, "image/svg+xml"), _image(not_an_image, "image/png"), _image("@@", "image/gif")]
        )
    )
    assert result.images == []
    assert result.text.splitlines() == [
        "[image: image/svg+xml, 6 bytes; not sent to the model: it reads only PNG, JPEG, GIF and WebP]",
        "[image: image/png, 11 bytes; not sent to the model: image data (image/png) is not a PNG, JPEG, GIF or WebP image]",
        "[image: image/gif, 0 bytes; not sent to the model: image data is not valid base64]",
    ]
    assert len(result.content) == 3  # the client still gets what the server sent


def test_images_go_to_the_model_while_the_result_stays_within_the_size_limit():
    big = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * (MAX_IMAGE_DATA_CHARS * 3 // 4 - 1000)).decode()
    result = tool_result(mt.CallToolResult(content=[_image(big, "image/png"), _image(PNG, "image/png")]))
    assert [image.data for image in result.images] == [big]
    assert result.text == "[image: image/png, 2.0 KB; not sent to the model: this result's images pass the 5 MiB limit]"
    too_big = big + "A" * 2000
    alone = tool_result(mt.CallToolResult(content=[_image(too_big, "image/png")]))
    assert alone.images == [] and "the limit is 5 MiB" in alone.text


def test_audio_is_a_marker_for_the_model():
    audio = mt.AudioContent(type="audio", data=PNG, mime_type="audio/wav")
    result = tool_result(mt.CallToolResult(content=[audio]))
    assert result.text == "[audio: audio/wav, 2.0 KB]" and result.images == []
    assert result.content == [Audio("audio/wav", PNG)]


def _image(data: str, mime_type: str) -> mt.ImageContent:
    return mt.ImageContent(type="image", data=data, mime_type=mime_type)


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
    assert result.content == [  # as the server gave them
        Resource(
            {
                "type": "resource",
                "resource": {"uri": "file:///w/main.tf", "mimeType": "text/plain", "text": 'resource "x" "y" {}'},
            }
        ),
        Resource(
            {
                "type": "resource",
                "resource": {"uri": "file:///w/plan.bin", "mimeType": "application/octet-stream", "blob": PNG},
            }
        ),
        Resource({"type": "resource_link", "uri": "file:///w/state", "name": "state", "mimeType": "application/json"}),
    ]
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
