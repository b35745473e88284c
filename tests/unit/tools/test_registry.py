from iac_code.tools.registry import default_tools


def test_every_tool_is_registered_under_its_own_name() -> None:
    tools = default_tools()
    expected = [
        "read_file",
        "list_files",
        "glob",
        "grep",
        "iac_check",
        "iac_plan",
        "provider_schema",
        "write_file",
        "edit_file",
        "bash",
        "web_fetch",
        "agent",
        "update_plan",
        "ask_user",
    ]
    assert sorted(tools) == sorted(expected)
    assert all(name == tool.name for name, tool in tools.items())


def test_read_only_tools_are_exactly_the_read_category() -> None:
    read_only = {name for name, tool in default_tools().items() if tool.category == "read"}
    assert read_only == {
        "read_file",
        "list_files",
        "glob",
        "grep",
        "iac_check",
        "iac_plan",
        "provider_schema",
        "web_fetch",
        "update_plan",
        "ask_user",
    }


def test_kinds_and_schemas() -> None:
    tools = default_tools()
    kinds = {name: tool.kind for name, tool in tools.items()}
    assert kinds == {
        "read_file": "read",
        "list_files": "read",
        "glob": "search",
        "grep": "search",
        "iac_check": "search",
        "iac_plan": "read",
        "provider_schema": "read",
        "write_file": "edit",
        "edit_file": "edit",
        "bash": "execute",
        "web_fetch": "fetch",
        "agent": "execute",
        "update_plan": "think",
        "ask_user": "other",
    }
    for tool in tools.values():
        assert tool.parameters["type"] == "object"
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])
        assert tool.description


def test_instances_are_fresh() -> None:
    assert default_tools()["bash"] is not default_tools()["bash"]
    assert default_tools()["web_fetch"].allow_private is False
