import json

import pytest

from iac_code.config import ConfigError, load_settings


def test_defaults_with_an_empty_environment(tmp_path):
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert settings.config_dir == tmp_path
    assert settings.sessions_dir == tmp_path / "sessions"
    assert not settings.model_configured
    assert (settings.max_turns, settings.compact_threshold) == (50, 0.8)


def test_config_file_is_read_and_environment_wins(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"provider": "dashscope", "model": "qwen-plus", "max_turns": 7, "unknown_key": "ignored"})
    )
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MODEL": "qwen-max"})
    assert settings.provider == "dashscope" and settings.model_configured
    assert settings.model == "qwen-max", "the environment overrides the file"
    assert settings.max_turns == 7


def test_numbers_are_checked_and_the_error_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="IAC_CODE_MAX_TURNS"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_MAX_TURNS": "many"})


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_a_broken_config_file_is_a_clear_error(tmp_path, content):
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(ConfigError, match="config.json"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})


def test_the_environment_is_kept_for_provider_key_lookups(tmp_path):
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "OPENAI_API_KEY": "sk-x"})
    assert settings.env["OPENAI_API_KEY"] == "sk-x"


def test_a_bad_number_in_the_config_file_is_named_as_written_there(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"max_turns": "many"}))
    with pytest.raises(ConfigError) as caught:
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert str(caught.value) == f"max_turns in {tmp_path / 'config.json'} must be a number, got 'many'"


def test_unknown_keys_in_the_config_file_are_reported_with_the_closest_valid_one(tmp_path, caplog):
    (tmp_path / "config.json").write_text(json.dumps({"modle": "qwen-plus", "zzz": 1, "provider": "dashscope"}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert settings.provider == "dashscope" and settings.model == ""
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("'modle'" in w and "did you mean 'model'" in w for w in warnings), warnings
    assert any("'zzz'" in w and "did you mean" not in w for w in warnings), warnings


def test_null_in_the_config_file_means_unset(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"provider": "openai", "api_key": None, "max_turns": None}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert settings.api_key == "" and settings.max_turns == 50


def test_the_http_token_is_a_setting_never_shown(tmp_path):
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IACCODE_ACP_HTTP_TOKEN": "tok-secret"})
    assert settings.http_token == "tok-secret"
    assert "tok-secret" not in repr(settings)


def test_the_worker_idle_time_and_the_cache_path_come_from_the_settings(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"worker_idle_seconds": 60}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert settings.worker_idle_seconds == 60
    assert settings.iac_cache_path == tmp_path / "cache" / "iac-check.sqlite"
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_WORKER_IDLE_SECONDS": "5"}
    assert load_settings(env).worker_idle_seconds == 5


def test_every_config_key_is_its_variable_without_the_prefix_in_lower_case(tmp_path):
    from iac_code.config import ENV_ALIASES, ENV_KEYS, config_key

    for name, variable in ENV_KEYS.items():
        prefixed = next(v for v in (variable, *ENV_ALIASES.get(name, ())) if v.startswith("IAC_CODE_"))
        assert config_key(name) == prefixed.removeprefix("IAC_CODE_").lower()
    (tmp_path / "config.json").write_text(json.dumps({"mcp_timeout": 7, "acp_http_token": "t0k", "jwt_issuer": "i"}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (settings.mcp_timeout_seconds, settings.http_token, settings.jwt_issuer) == (7, "t0k", "i")


def test_the_keys_earlier_versions_read_still_work(tmp_path, caplog):
    (tmp_path / "config.json").write_text(json.dumps({"mcp_timeout_seconds": 9, "http_token": "old"}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert (settings.mcp_timeout_seconds, settings.http_token) == (9, "old")
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


@pytest.mark.parametrize("variable", ["IACCODE_ACP_HTTP_TOKEN", "IAC_CODE_ACP_HTTP_TOKEN"])
def test_the_http_token_is_read_under_either_spelling(tmp_path, variable):
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), variable: "s3cret"})
    assert settings.http_token == "s3cret"


def test_two_spellings_of_the_token_that_disagree_are_refused(tmp_path):
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path), "IACCODE_ACP_HTTP_TOKEN": "a", "IAC_CODE_ACP_HTTP_TOKEN": "b"}
    with pytest.raises(ConfigError, match="IACCODE_ACP_HTTP_TOKEN and IAC_CODE_ACP_HTTP_TOKEN are both set"):
        load_settings(env)
    env["IAC_CODE_ACP_HTTP_TOKEN"] = "a"
    assert load_settings(env).http_token == "a"


def test_a_shared_servers_lists_come_from_the_file_or_the_environment(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "workspace_roots": {"alice": ["/srv/alice"], "*": ["/srv/team", "/srv/shared"]},
                "client_mcp_commands": ["/usr/bin/mcp-terraform"],
            }
        )
    )
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_CLIENT_MCP_NETWORKS": "10.0.0.0/8, ::1"})
    assert settings.workspace_roots == {"alice": ("/srv/alice",), "*": ("/srv/team", "/srv/shared")}
    assert settings.client_mcp_commands == ("/usr/bin/mcp-terraform",)
    assert settings.client_mcp_networks == ("10.0.0.0/8", "::1")
    everyone = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_WORKSPACE_ROOTS": "/srv/a,/srv/b"})
    assert everyone.workspace_roots == {"*": ("/srv/a", "/srv/b")}


@pytest.mark.parametrize("value", [{"alice": 3}, [1], {"*": [None]}])
def test_a_bad_list_is_a_clear_error(tmp_path, value):
    (tmp_path / "config.json").write_text(json.dumps({"workspace_roots": value}))
    with pytest.raises(ConfigError, match="workspace_roots in .* must be a list of strings"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})


@pytest.mark.parametrize(
    ("setting", "value", "problem"),
    [
        ("client_mcp_networks", ["10.0.0.0/8", "intranet.example"], "must hold addresses or CIDR networks"),
        ("client_mcp_commands", ["npx"], "must hold absolute paths"),
        ("workspace_roots", {"alice": ["srv/alice"]}, "must hold absolute paths"),
    ],
)
def test_a_shared_servers_lists_are_checked_at_start_up(tmp_path, setting, value, problem):
    (tmp_path / "config.json").write_text(json.dumps({setting: value}))
    with pytest.raises(ConfigError, match=f"{setting} in .*{problem}"):
        load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)})
