"""The offline demo: it proposes main.tf, but writes it only where a listing shows there is none."""

from __future__ import annotations

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.providers.base import TextDelta, ToolCallReady
from iac_code.providers.presets import DEMO_NOTICE, demo_provider


async def reply(history: list[Message]) -> tuple[str, list[ToolCall]]:
    events = [e async for e in demo_provider().stream("", history, [], max_tokens=100)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text, [e.call for e in events if isinstance(e, ToolCallReady)]


def listed(text: str, *, is_error: bool = False) -> list[Message]:
    call = ToolCall("call_1", "list_files", {"path": "."})
    return [user("go"), Message(role="assistant", tool_calls=[call]), tool_result(call, text, is_error=is_error)]


async def test_a_turn_starts_with_the_notice_and_a_look_at_the_workspace():
    text, [call] = await reply([user("add an S3 bucket")])
    assert text.startswith(DEMO_NOTICE)
    assert call.name == "list_files"


@pytest.mark.parametrize("listing", ["(empty directory)", "README.md\nmodules/\nvariables.tf", "main.tf.bak\nold/"])
async def test_main_tf_is_written_where_the_listing_has_none(listing):
    text, [call] = await reply(listed(listing))
    assert call.name == "write_file" and call.arguments["path"] == "main.tf"
    content = call.arguments["content"]
    assert content.count("{") == content.count("}") and "terraform {" in content and 'resource "' in content
    assert not text.startswith(DEMO_NOTICE), "the notice comes once per turn"


@pytest.mark.parametrize(
    ("listing", "is_error"),
    [
        ("README.md\nmain.tf", False),
        ("main.tf/", False),  # a directory of that name: no write either
        ("not a directory: /x", True),  # the look failed: nothing is known
        ("a.tf\n[Listing stopped at 1000 entries: list a subdirectory or use a lower depth.]", False),
    ],
)
async def test_no_write_where_main_tf_exists_or_cannot_be_ruled_out(listing, is_error):
    text, calls = await reply(listed(listing, is_error=is_error))
    assert calls == []
    assert "already exists" in text and "never overwrites" in text
    assert 'resource "alicloud_vpc" "main"' in text


async def test_after_the_write_it_summarises():
    call = ToolCall("call_2", "write_file", {"path": "main.tf", "content": "x"})
    history = [*listed("(empty directory)"), Message(role="assistant", tool_calls=[call]), tool_result(call, "ok")]
    text, calls = await reply(history)
    assert calls == [] and "terraform init && terraform validate" in text


@pytest.mark.parametrize("is_error", [False, True])
async def test_the_summary_claims_the_file_only_when_it_was_written(is_error):
    call = ToolCall("call_2", "write_file", {"path": "main.tf", "content": "x"})
    result = tool_result(call, "Permission denied." if is_error else "ok", is_error=is_error)
    history = [*listed("(empty directory)"), Message(role="assistant", tool_calls=[call]), result]
    text, _ = await reply(history)
    assert ("`main.tf` now holds" in text) is not is_error
    assert ("was not written" in text) is is_error
