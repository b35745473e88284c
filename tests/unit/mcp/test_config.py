"""Which servers a session gets: ACP's shapes, config.json's shape, the merge, bad entries, and logs without secrets."""

import json

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from iac_code.config import load_settings
from iac_code.mcp.config import (
    HttpServer,
    InvalidServer,
    StdioServer,
    describe,
    from_acp,
    from_settings,
    server_specs,
)


def test_acp_models_become_specs():
    specs = from_acp(
        [
            McpServerStdio(
                name="tf", command="npx", args=["-y", "terraform-mcp"], env=[EnvVariable(name="TOKEN", value="t0k")]
            ),
            HttpMcpServer(
                type="http",
                name="docs",
                url="https://docs.example/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer b")],
            ),
            SseMcpServer(type="sse", name="k8s", url="http://127.0.0.1:9000/sse", headers=[]),
        ]
    )
    assert specs == [
        StdioServer("tf", "npx", ("-y", "terraform-mcp"), {"TOKEN": "t0k"}),
        HttpServer("docs", "https://docs.example/mcp", "http", {"Authorization": "Bearer b"}),
        HttpServer("k8s", "http://127.0.0.1:9000/sse", "sse", {}),
    ]


def test_acp_dicts_in_wire_form_are_accepted():
    (stdio, http) = from_acp(
        [
            {"name": "tf", "command": "terraform-mcp", "args": [], "env": [{"name": "A", "value": "1"}]},
            {
                "type": "http",
                "name": "docs",
                "url": "http://127.0.0.1:1/mcp",
                "headers": [{"name": "X-Key", "value": "k"}],
            },
        ]
    )
    assert stdio == StdioServer("tf", "terraform-mcp", (), {"A": "1"})
    assert http == HttpServer("docs", "http://127.0.0.1:1/mcp", "http", {"X-Key": "k"})


def test_the_settings_shape_editors_use():
    specs = from_settings(
        {
            "tf": {"command": "npx", "args": ["-y", "terraform-mcp"], "env": {"TOKEN": "t"}},
            "docs": {"url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer b"}},
            "k8s": {"url": "http://127.0.0.1:9000/sse", "type": "sse"},
        }
    )
    assert specs == [
        StdioServer("tf", "npx", ("-y", "terraform-mcp"), {"TOKEN": "t"}),
        HttpServer("docs", "https://docs.example/mcp", "http", {"Authorization": "Bearer b"}),
        HttpServer("k8s", "http://127.0.0.1:9000/sse", "sse", {}),
    ]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({}, "either a `command` or a `url`"),
        ({"command": ""}, "needs a `command`"),
        ({"command": "x", "args": "--flag"}, "`args` must be a list"),
        ({"command": "x", "env": {"A": 1}}, "`env` must map"),
        ({"url": "ftp://host/x"}, "http(s) `url`"),
        ({"url": "http://h/x", "type": "websocket"}, "unknown MCP server type"),
        ("npx server", "must be a JSON object"),
        ({"command": "x", "trusted": "yes"}, "`trusted` must be true or false"),
        ({"url": "http://h/x", "trusted": 1}, "`trusted` must be true or false"),
        ({"command": "x", "trusted": None}, "`trusted` must be true or false"),
    ],
)
def test_a_bad_entry_becomes_an_invalid_server_and_the_others_stay(entry, problem):
    specs = from_settings({"bad": entry, "good": {"command": "server"}})
    assert specs[1] == StdioServer("good", "server")
    assert isinstance(specs[0], InvalidServer) and specs[0].name == "bad"
    assert problem in specs[0].problem


def test_an_unknown_acp_type_is_invalid():
    (spec,) = from_acp([{"type": "acp", "name": "peer", "id": "x"}])
    assert spec == InvalidServer("peer", "unknown MCP server type 'acp' (expected stdio, http or sse)")


def test_the_client_wins_on_a_name_clash_and_settings_servers_come_first(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"mcpServers": {"tf": {"command": "old-tf"}, "docs": {"url": "http://127.0.0.1:1/mcp"}}})
    )
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    specs = server_specs(settings, [{"name": "tf", "command": "new-tf", "args": [], "env": []}])
    assert specs == [StdioServer("tf", "new-tf"), HttpServer("docs", "http://127.0.0.1:1/mcp")]


def test_only_the_settings_file_makes_a_server_trusted(tmp_path):
    servers = {
        "tf": {"command": "tf-mcp", "trusted": True},
        "docs": {"url": "http://127.0.0.1:1/mcp", "trusted": True},
        "k8s": {"command": "k8s-mcp", "trusted": False},
        "cloud": {"command": "cloud-mcp"},
    }
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": servers}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    # the client's "tf" replaces the trusted one and is not trusted; a client cannot vouch for its own server
    client = [
        {"name": "tf", "command": "tf-mcp", "args": [], "env": [], "trusted": True},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:2/mcp", "headers": [], "trusted": True},
    ]
    trusted = {spec.name: getattr(spec, "trusted", None) for spec in server_specs(settings, client)}
    assert trusted == {"tf": False, "docs": True, "k8s": False, "cloud": False, "web": False}
    assert from_settings(servers)[0] == StdioServer("tf", "tf-mcp", trusted=True)
    # the log says which servers the user vouches for
    assert [describe(spec) for spec in from_settings(servers)[:3]] == [
        "stdio `tf-mcp` (0 arguments), trusted",
        "http http://127.0.0.1:1/mcp, trusted",
        "stdio `k8s-mcp` (0 arguments)",
    ]


def test_settings_carry_the_call_timeout_from_the_file_or_the_environment(tmp_path):
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}).mcp_timeout_seconds == 120
    (tmp_path / "config.json").write_text(json.dumps({"mcp_timeout_seconds": 30}))
    assert load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}).mcp_timeout_seconds == 30
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MCP_TIMEOUT": "7.5"}
    assert load_settings(env).mcp_timeout_seconds == 7.5


def test_a_non_object_mcp_servers_setting_is_reported_not_fatal(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": ["tf"]}))
    (spec,) = server_specs(load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}))
    assert isinstance(spec, InvalidServer) and "must be an object" in spec.problem


def test_descriptions_and_reprs_never_show_secret_values():
    stdio = StdioServer("tf", "npx", ("--token", "argsecret"), {"TOKEN": "envsecret"})
    http = HttpServer(
        "docs", "https://user:pw@docs.example/mcp?key=querysecret", "http", {"Authorization": "hdrsecret"}
    )
    shown = describe(stdio) + describe(http) + repr(stdio) + repr(http)
    assert "TOKEN" in shown and "https://docs.example/mcp" in shown
    for secret in ("argsecret", "envsecret", "querysecret", "hdrsecret", "pw"):
        assert secret not in shown


def test_settings_repr_keeps_mcp_secrets_out(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"mcpServers": {"tf": {"command": "x", "env": {"T": "envsecret"}}}})
    )
    assert "envsecret" not in repr(load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}))
