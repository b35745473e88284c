"""Which launches may be handed off: `iac-code acp` on stdio only, and only when the warm setting allows."""

from __future__ import annotations

import json

import pytest

from iac_code.warm.launch import _kept_for_warm_process, on_stdio, warm_wanted
from iac_code.warm.place import key_material, runtime_dir, socket_path


@pytest.mark.parametrize(
    "argv",
    [
        ["acp"],
        ["acp", "--transport", "stdio"],
        ["acp", "--transport=stdio"],
        ["acp", "--debug", "--log-file", "agent.log"],
        ["acp", "-d", "--log-file=agent.log"],
    ],
)
def test_stdio_launches_may_be_handed_off(argv):
    assert on_stdio(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["-p", "hi"],
        ["--debug", "acp"],
        ["audit"],
        ["token", "add", "me"],
        ["acp", "--transport", "http"],
        ["acp", "--transport=http"],
        ["acp", "--transport"],
        ["acp", "--port", "8765"],
        ["acp", "--help"],
        ["acp", "-h"],
        ["acp", "--log-file"],
        ["acp", "--transport", "stdio", "--transport", "http"],
        ["acp", "extra"],
    ],
)
def test_everything_else_runs_in_process(argv):
    assert not on_stdio(argv)


def test_the_environment_decides_first(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"warm": "off"}))
    assert warm_wanted({"IAC_CODE_WARM": "auto", "IAC_CODE_CONFIG_DIR": str(tmp_path)})
    assert not warm_wanted({"IAC_CODE_WARM": "off"})
    assert not warm_wanted({"IAC_CODE_WARM": "Auto"})  # not a value config.py accepts: in-process says why


@pytest.mark.parametrize(
    ("config", "wanted"),
    [
        (None, True),
        ({}, True),
        ({"warm": "auto"}, True),
        ({"warm": "off"}, False),
        ({"warm": "sometimes"}, False),
        ([], False),
        ("{not json", False),
    ],
)
def test_config_json_decides_when_the_environment_does_not(tmp_path, config, wanted):
    if config is not None:
        text = config if isinstance(config, str) else json.dumps(config)
        (tmp_path / "config.json").write_text(text)
    assert warm_wanted({"IAC_CODE_WARM": "", "IAC_CODE_CONFIG_DIR": str(tmp_path)}) is wanted


def test_the_runtime_directory_is_made_private_and_checked(tmp_path):
    path = runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)})
    assert path == str(tmp_path / "iac-code")
    assert (tmp_path / "iac-code").stat().st_mode & 0o777 == 0o700
    (tmp_path / "iac-code").chmod(0o750)
    assert runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)}) is None


def test_without_a_runtime_directory_a_per_user_one_in_the_temporary_directory(tmp_path):
    path = runtime_dir({"XDG_RUNTIME_DIR": "relative", "TMPDIR": str(tmp_path)})
    assert path is not None and path.startswith(str(tmp_path / "iac-code-"))


def test_the_warm_process_is_started_with_every_variable_its_key_reads():
    """The launcher and the warm process it starts must compute one key, or the warm process refuses to serve
    (LANGUAGE, set on many desktops, once made the two differ) — and no credential may be read into the key."""
    env = {
        "LANG": "C.UTF-8",
        "LANGUAGE": "en_US:en",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "LANGCHAIN_API_KEY": "key-value-7f3e2a",
        "OPENAI_API_KEY": "key-value-7f3e2a",
        "HOME": "/home/someone",
    }
    kept = {name: value for name, value in env.items() if _kept_for_warm_process(name)}
    assert key_material(kept) == key_material(env)
    assert "key-value-7f3e2a" not in key_material(env)


def test_a_socket_path_too_long_for_a_unix_socket_is_none():
    """The warm process binds "<socket>.<pid>" first: that name too must fit the address's 107 bytes."""
    name = "warm-0123abcd"
    fitting = "/" + "d" * (107 - len(f"/{name}.sock.4194304") - 1)
    assert socket_path(fitting, name) == f"{fitting}/{name}.sock"
    assert socket_path(fitting + "d", name) is None
