"""The key a sign-in stored sits between config.json and the environment, and a damaged file is no key."""

from __future__ import annotations

import json

from iac_code.config import load_settings
from iac_code.stored_credentials import credentials_path, forget_credentials, store_api_key, stored_api_key


def test_the_stored_key_wins_over_config_json_and_loses_to_the_environment(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"api_key": "from-file"}))
    env = {"IAC_CODE_CONFIG_DIR": str(tmp_path)}
    assert load_settings(env).api_key == "from-file"
    store_api_key(tmp_path, "stored")
    assert load_settings(env).api_key == "stored"
    assert load_settings({**env, "IAC_CODE_API_KEY": "from-env"}).api_key == "from-env"
    assert forget_credentials(tmp_path) and not forget_credentials(tmp_path)
    assert load_settings(env).api_key == "from-file"


def test_a_file_without_a_string_key_holds_no_key(tmp_path):
    for text in ("{", "[]", '{"api_key": 5}'):
        credentials_path(tmp_path).write_text(text)
        assert stored_api_key(tmp_path) == ""
