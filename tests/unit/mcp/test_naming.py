"""Tool and command names: valid for every provider, distinct, and stable whatever the order."""

import re

from hypothesis import given
from hypothesis import strategies as st

from iac_code.mcp.naming import name_parts, qualified_names, server_parts

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _all_names(servers: dict[str, list[str]]) -> list[str]:
    parts = server_parts(servers)
    return [name for server, tools in servers.items() for name in qualified_names(parts[server], tools).values()]


def test_plain_names_are_kept():
    parts = server_parts(["terraform", "k8s-docs"])
    assert parts == {"terraform": "terraform", "k8s-docs": "k8s-docs"}
    assert qualified_names("terraform", ["plan", "get-provider_docs"]) == {
        "plan": "mcp__terraform__plan",
        "get-provider_docs": "mcp__terraform__get-provider_docs",
    }


def test_a_qualified_name_splits_into_its_server_and_tool_parts():
    assert name_parts("mcp__a_b__get__thing") == ("a_b", "get__thing")  # the first "__" ends the server
    assert name_parts("read_file") is None and name_parts("mcp__only") is None


def test_unsafe_characters_become_underscores_and_the_server_part_has_no_double_underscore():
    parts = server_parts(["My Server.v2", "a__b"])
    assert parts == {"My Server.v2": "My_Server_v2", "a__b": "a_b"}
    assert qualified_names("a_b", ["get.thing"]) == {"get.thing": "mcp__a_b__get_thing"}


def test_servers_that_clean_up_alike_are_told_apart_by_a_hash_of_their_name():
    parts = server_parts(["my.server", "my server", "other"])
    assert parts["other"] == "other"
    assert parts["my.server"] != parts["my server"]
    assert all(p.startswith("my_server_") for p in (parts["my.server"], parts["my server"]))
    # the same names whatever the order servers are listed (or connect) in
    assert server_parts(["other", "my server", "my.server"]) == parts


def test_tools_that_clean_up_alike_are_told_apart():
    names = qualified_names("s", ["a.b", "a_b", "c"])
    assert names["c"] == "mcp__s__c"
    assert len(set(names.values())) == 3


def test_long_names_are_cut_to_64_with_a_hash():
    long_tool = "describe_" + "x" * 100
    (name,) = qualified_names(server_parts(["s" * 40])["s" * 40], [long_tool]).values()
    assert VALID.match(name) and len(name) == 64
    other = qualified_names(server_parts(["s" * 40])["s" * 40], [long_tool + "y"])[long_tool + "y"]
    assert other != name


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=80),
        st.lists(st.text(min_size=1, max_size=90), unique=True, max_size=6),
        max_size=5,
    )
)
def test_any_names_give_valid_distinct_names(servers):
    names = _all_names(servers)
    assert all(VALID.match(name) for name in names)
    assert len(names) == len(set(names))
    for part in server_parts(servers).values():
        assert "__" not in part
