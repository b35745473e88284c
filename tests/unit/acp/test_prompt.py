"""Prompt blocks → the user message: text, images (checked), markers, and resource links read from the workspace."""

import base64
import json

import pytest
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from iac_code.acp.prompt import MAX_LINKED_FILE_BYTES, user_blocks, user_message
from iac_code.errors import InvalidParams
from iac_code.image_data import MAX_IMAGE_DATA_CHARS
from iac_code.messages import Image, Message

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
WEBP = base64.b64encode(b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20).decode()


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def image(data: str, mime_type: str = "image/png") -> ImageContentBlock:
    return ImageContentBlock(type="image", data=data, mime_type=mime_type)


def link(uri: str, name: str = "f") -> ResourceContentBlock:
    return ResourceContentBlock(type="resource_link", uri=uri, name=name)


async def test_images_are_attached_when_the_model_reads_them(tmp_path):
    # The client said jpeg, the bytes say WebP: the bytes win, or the model API would refuse the image.
    message = await user_message([text("What is this?"), image(PNG), image(WEBP, "image/jpeg")], tmp_path, images=True)
    assert message.role == "user" and message.text == "What is this?"
    assert message.images == [Image("image/png", PNG), Image("image/webp", WEBP)]


async def test_images_become_todays_marker_for_a_text_only_model_and_audio_always_does(tmp_path):
    audio = AudioContentBlock(type="audio", data="aGk=", mime_type="audio/wav")
    message = await user_message([text("Look"), image(PNG), audio], tmp_path, images=False)
    assert message.text == "Look\n[image: image/png]\n[audio: audio/wav]"
    assert message.images == []


async def test_an_image_over_the_limit_is_refused_naming_the_block(tmp_path):
    head = base64.b64encode(b"\x89PNG\r\n\x1a\n\0\0\0\0").decode()  # 12 bytes: no padding, more may follow
    at_limit = head + "A" * (MAX_IMAGE_DATA_CHARS - len(head))
    assert len((await user_message([image(at_limit)], tmp_path, images=True)).images[0].data) == MAX_IMAGE_DATA_CHARS
    with pytest.raises(InvalidParams) as caught:
        await user_message([text("two"), image(PNG), image(at_limit + "AAAA")], tmp_path, images=True)
    (reason,) = caught.value.data.values()
    assert list(caught.value.data) == ["prompt[2]"]
    assert "limit is 5 MiB" in reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [("not base64!!", "not valid base64"), (base64.b64encode(b"BM bitmap").decode(), "not a PNG, JPEG, GIF or WebP")],
)
async def test_unusable_image_data_is_refused(tmp_path, data, reason):
    with pytest.raises(InvalidParams) as caught:
        await user_message([image(data)], tmp_path, images=True)
    assert reason in caught.value.data["prompt[0]"]


async def test_a_resource_link_inside_the_workspace_is_read(tmp_path):
    (tmp_path / "my vars.tf").write_text('variable "cidr" {}\n')
    uri = (tmp_path / "my vars.tf").as_uri()
    message = await user_message([text("check"), link(uri, "my vars.tf")], tmp_path, images=False)
    assert message.text == f'check\n<resource uri="{uri}">\nvariable "cidr" {{}}\n\n</resource>'


async def test_a_large_linked_file_is_cut(tmp_path):
    (tmp_path / "big.tf").write_text("x" * (MAX_LINKED_FILE_BYTES * 2))
    message = await user_message([link((tmp_path / "big.tf").as_uri())], tmp_path, images=False)
    assert message.text.count("x") == MAX_LINKED_FILE_BYTES
    assert "read the rest with read_file" in message.text


async def test_other_links_are_only_mentioned(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    (workspace / "blob.bin").write_bytes(b"\x00\x01binary")
    blocks = [
        link((tmp_path / "secret.txt").as_uri(), "secret.txt"),
        link("https://example.com/docs", "docs"),
        link((workspace / "missing.tf").as_uri(), "missing.tf"),
        link((workspace / "blob.bin").as_uri(), "blob.bin"),
    ]
    message = await user_message(blocks, workspace, images=False)
    assert "top secret" not in message.text and "binary" not in message.text
    assert message.text.splitlines() == [
        f"[resource link: secret.txt {(tmp_path / 'secret.txt').as_uri()}]",
        "[resource link: docs https://example.com/docs]",
        f"[resource link: missing.tf {(workspace / 'missing.tf').as_uri()}]",
        f"[resource link: blob.bin {(workspace / 'blob.bin').as_uri()}]",
    ]


async def test_embedded_resources_are_included(tmp_path):
    block = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri="file:///x/main.tf", text='resource "a" "b" {}')
    )
    message = await user_message([block], tmp_path, images=True)
    assert message.text == '<resource uri="file:///x/main.tf">\nresource "a" "b" {}\n</resource>'


async def test_user_blocks_give_back_what_was_sent(tmp_path):
    message = await user_message([text("Explain"), image(PNG)], tmp_path, images=True)
    assert user_blocks(message) == [text("Explain"), image(PNG)]


async def test_the_blocks_sent_survive_the_store_as_they_came_and_an_attached_image_is_stored_once(tmp_path):
    link = ResourceContentBlock(type="resource_link", name="docs", uri="https://example.com/docs", field_meta={"k": 1})
    embedded = EmbeddedResourceContentBlock(
        type="resource", resource=TextResourceContents(uri="file:///x/main.tf", text="x = 1", mime_type="text/x-hcl")
    )
    wrapped = image(PNG[:40] + "\n" + PNG[40:])  # some clients wrap base64 lines: the model gets it unwrapped
    sent = [text("Explain"), link, embedded, wrapped]
    message = await user_message(sent, tmp_path, images=True)
    stored = message.to_dict()
    assert PNG not in json.dumps(stored["blocks"]) and stored["blocks"][3]["image"] == 0
    assert user_blocks(Message.from_dict(json.loads(json.dumps(stored)))) == [
        text("Explain"),
        link,
        embedded,
        image(PNG),
    ]


async def test_an_image_the_model_does_not_read_is_kept_with_the_blocks(tmp_path):
    message = await user_message([text("Look"), image(PNG)], tmp_path, images=False)
    assert message.images == [] and user_blocks(Message.from_dict(message.to_dict())) == [text("Look"), image(PNG)]


def test_a_message_stored_before_blocks_were_kept_shows_its_text_and_images():
    message = Message.from_dict({"role": "user", "text": "Why?", "images": [{"mime_type": "image/png", "data": PNG}]})
    assert user_blocks(message) == [text("Why?"), image(PNG)]
