"""The ranking of tool_search: words in a tool's name weigh more than in its description, the exact name
wins, ties keep the servers' order, and the tool's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.agent.tool_search import Entry, Match, ToolSearchTool, query_words, rank
from iac_code.tools.base import ToolContext, ToolError


def entries(*tools: tuple[str, str]) -> list[Entry]:
    return [Entry.of(name, description) for name, description in tools]


CLOUD = entries(
    ("mcp__cloud__list_buckets", "List the buckets of an account."),
    ("mcp__cloud__delete_bucket", "Delete a bucket and every object in it."),
    ("mcp__cloud__describe_volume", "Describe a volume; mentions buckets nowhere in its name."),
    ("mcp__cloud__create_snapshot", "Snapshot a volume."),
    ("mcp__git__create_issue", "Open an issue in a repository."),
)


def test_a_word_in_the_name_outranks_the_same_word_in_a_description():
    assert rank("volume", CLOUD, 10) == ["mcp__cloud__describe_volume", "mcp__cloud__create_snapshot"]


def test_more_matching_words_rank_higher_and_ties_keep_the_servers_order():
    assert rank("create volume snapshot", CLOUD, 10) == [
        "mcp__cloud__create_snapshot",  # create and snapshot in its name, volume in its description
        "mcp__cloud__describe_volume",
        "mcp__git__create_issue",
    ]
    # the word as written first, then a word it begins or that begins it
    assert rank("bucket", CLOUD, 10)[:2] == ["mcp__cloud__delete_bucket", "mcp__cloud__list_buckets"]


def test_the_exact_name_wins_qualified_or_as_its_server_named_it():
    words = rank("snapshot volume describe", CLOUD, 10)
    assert words[0] == "mcp__cloud__describe_volume"  # two name words against one
    assert rank("create_snapshot", CLOUD, 10)[0] == "mcp__cloud__create_snapshot"
    assert rank("mcp__git__create_issue", CLOUD, 10)[0] == "mcp__git__create_issue"
    assert rank("CREATE_ISSUE", CLOUD, 1) == ["mcp__git__create_issue"]


def test_prefixes_of_three_letters_or_more_match_a_name_word_but_short_ones_only_whole():
    assert rank("snap", CLOUD, 10) == ["mcp__cloud__create_snapshot"]
    assert rank("sn", CLOUD, 10) == []
    assert rank("buckets", CLOUD, 10)[:2] == ["mcp__cloud__list_buckets", "mcp__cloud__delete_bucket"]


def test_the_server_name_counts_like_the_description_and_stop_words_not_at_all():
    assert rank("git", CLOUD, 10) == ["mcp__git__create_issue"]
    assert rank("the of a", CLOUD, 10) == []
    assert query_words("Delete the deleteBucket bucket") == ["delete", "bucket"]


def test_limit_and_no_match():
    assert len(rank("create", CLOUD, 1)) == 1
    assert rank("kubernetes", CLOUD, 10) == []


def found(placement):
    return [Match("mcp__cloud__list_buckets", "List the buckets.", {"type": "object"}, placement)]


async def test_the_tool_answers_with_the_matches_and_what_it_offered():
    asked = []

    async def find(query, limit):
        asked.append((query, limit))
        return found("offered")

    tool = ToolSearchTool(find)
    result = await tool.run({"query": "buckets", "limit": 500}, ToolContext(Path("/tmp")))
    assert asked == [("buckets", 50)]  # clamped to the most it lists
    assert result.text.splitlines() == [
        "Found 1 MCP tool, best first:",
        "- mcp__cloud__list_buckets: List the buckets.",
        "The tools listed are offered from your next step: call them by name.",
    ]
    assert result.raw_output == {
        "query": "buckets",
        "matches": ["mcp__cloud__list_buckets"],
        "offered": ["mcp__cloud__list_buckets"],
    }
    assert tool.access({"query": "x"}) == "read" and tool.title({"query": "x"}) == "Search MCP tools: x"


async def test_a_tool_that_does_not_fit_is_described_with_its_arguments():
    async def find(query, limit):
        return found("described")

    result = await ToolSearchTool(find).run({"query": "b"}, ToolContext(Path("/tmp")))
    assert '(not offered, the list is full: call it by name; arguments: {"type": "object"})' in result.text
    assert result.raw_output["offered"] == []


async def test_no_match_and_no_query_are_errors_the_model_can_act_on():
    async def nothing(query, limit):
        return []

    tool = ToolSearchTool(nothing)
    with pytest.raises(ToolError, match="No MCP tool matches 'kubernetes'"):
        await tool.run({"query": "kubernetes"}, ToolContext(Path("/tmp")))
    with pytest.raises(ToolError, match="'query' is required"):
        await tool.run({"query": "  "}, ToolContext(Path("/tmp")))
