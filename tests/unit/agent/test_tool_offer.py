"""Which tools a model call offers: all of them under the share of the context window, else the built-in
tools, tool_search and what it found, in a stable order; found tools survive a reload of the history."""

from __future__ import annotations

from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.compaction import CHARS_PER_TOKEN
from iac_code.agent.tool_offer import ToolOffer, found_in, schema_chars
from iac_code.agent.tool_search import TOOL_NAME

BUILTINS = {"read_file": FakeTool("read_file"), "bash": FakeTool("bash", category="execute")}


def server_tools(count: int, server: str = "cloud") -> list[FakeTool]:
    return [FakeTool(f"mcp__{server}__tool_{i}", description=f"Operation {i} of the {server}.") for i in range(count)]


def test_a_schema_counts_its_json():
    tool = FakeTool("look", description="d" * 100, parameters={"type": "object", "properties": {}})
    assert schema_chars(tool) == len('{"name": "look", "description": "' + "d" * 100 + '", "parameters": ') + len(
        '{"type": "object", "properties": {}}}'
    )


def window_for(tools, share=0.1) -> int:
    """The smallest context window in which `tools`' schemas fit in `share`."""
    return -(-sum(schema_chars(t) for t in tools) // CHARS_PER_TOKEN * 10)


def test_under_the_share_every_tool_is_offered_and_there_is_no_search():
    mcp = server_tools(5)
    offer = ToolOffer(dict(BUILTINS), lambda: mcp)
    offer.refresh(window_for([*BUILTINS.values(), *mcp]) + 10)
    assert not offer.searching
    assert [t.name for t in offer.offered()] == [*BUILTINS, *(t.name for t in mcp)]
    assert TOOL_NAME not in offer.tools


def test_over_the_share_the_built_ins_and_the_search_are_offered_and_every_tool_is_callable():
    mcp = [*server_tools(30), *server_tools(4, "git")]
    offer = ToolOffer(dict(BUILTINS), lambda: mcp)
    offer.refresh(window_for([*BUILTINS.values(), *mcp]) - 40)
    assert offer.searching
    assert [t.name for t in offer.offered()] == ["read_file", "bash", TOOL_NAME]
    assert set(offer.tools) == {*BUILTINS, TOOL_NAME, *(t.name for t in mcp)}
    description = offer.tools[TOOL_NAME].description
    assert "They have 34 tools (servers: cloud (30), git (4))" in description


async def test_found_tools_are_appended_in_the_order_found_and_stay():
    mcp = server_tools(40)
    offer = ToolOffer(dict(BUILTINS), lambda: mcp, share=0.1)
    offer.refresh(5_000)  # 500 tokens for the tools: the built-ins, the search and a few found
    first = await offer.find("tool_7", 1)
    assert [(m.name, m.placement) for m in first] == [("mcp__cloud__tool_7", "offered")]
    again = await offer.find("operation 7", 2)
    placements = [(m.name, m.placement) for m in again]
    assert placements == [("mcp__cloud__tool_7", "already offered"), (again[1].name, "offered")]
    offer.refresh(5_000)
    assert [t.name for t in offer.offered()] == ["read_file", "bash", TOOL_NAME, "mcp__cloud__tool_7", again[1].name]


async def test_a_found_tool_that_would_pass_the_share_is_only_described():
    mcp = server_tools(40)
    offer = ToolOffer(dict(BUILTINS), lambda: mcp, share=0.1)
    offer.refresh(5_000)
    placements = [m.placement for m in await offer.find("operation", 40)]
    assert placements[0] == "offered" and placements[-1] == "described"
    offered = offer.offered()
    assert sum(schema_chars(t) for t in offered) <= 0.1 * 5_000 * CHARS_PER_TOKEN


def test_a_tool_named_like_a_built_in_is_left_out_and_a_gone_server_takes_its_found_tools():
    mcp = [FakeTool("bash", description="a server's bash"), *server_tools(40)]
    offer = ToolOffer(dict(BUILTINS), lambda: mcp, found=["mcp__cloud__tool_3"])
    offer.refresh(5_000)
    assert offer.tools["bash"] is BUILTINS["bash"]
    assert [t.name for t in offer.offered()][-1] == "mcp__cloud__tool_3"
    mcp = server_tools(40, "other")
    offer.refresh(5_000)
    assert [t.name for t in offer.offered()] == ["read_file", "bash", TOOL_NAME]


async def test_through_the_loop_the_model_searches_then_calls_what_it_found_and_a_reload_keeps_it():
    mcp = server_tools(200)
    provider = FakeProvider(
        call(TOOL_NAME, query="operation 42", limit=1),
        call("mcp__cloud__tool_42", "c2"),
        call("mcp__cloud__tool_7", "c3"),  # not offered, but it exists: it runs
        say("done"),
        context_window=5_000,
    )
    loop = make_loop(provider, BUILTINS.values(), extra_tools=lambda: mcp)
    async for _ in loop.run("go"):
        pass
    first, *later = provider.tool_names
    assert first == ["read_file", "bash", TOOL_NAME]
    assert all(names == ["read_file", "bash", TOOL_NAME, "mcp__cloud__tool_42"] for names in later)
    assert mcp[42].runs == [{}] and mcp[7].runs == [{}]
    assert found_in(loop.history) == ["mcp__cloud__tool_42"]

    reloaded = FakeProvider(say("again"), context_window=5_000)
    again = make_loop(reloaded, BUILTINS.values(), history=loop.history, extra_tools=lambda: mcp)
    async for _ in again.run("more"):
        pass
    assert reloaded.tool_names == [["read_file", "bash", TOOL_NAME, "mcp__cloud__tool_42"]]
    again.clear()
    assert again.offer.found == []
