import subprocess
import sys

from iac_code.credentials import SECRET_VARIABLES, without_secrets
from iac_code.providers.presets import PRESETS


def test_every_provider_key_variable_is_a_secret():
    assert {p.key_env for p in PRESETS.values() if p.key_env} <= SECRET_VARIABLES
    assert {"IAC_CODE_API_KEY", "ANTHROPIC_AUTH_TOKEN", "IACCODE_ACP_HTTP_TOKEN"} <= SECRET_VARIABLES


def test_without_secrets_keeps_everything_else():
    assert without_secrets({"OPENAI_API_KEY": "sk", "ALICLOUD_ACCESS_KEY": "ak", "PATH": "/bin"}) == {
        "ALICLOUD_ACCESS_KEY": "ak",
        "PATH": "/bin",
    }


def test_withholding_erases_the_initial_environment_block():
    # In a child process: this rewrites the process's own environment.
    code = (
        "import os; from iac_code.credentials import withhold_from_environment; "
        "withhold_from_environment(); "
        "print(repr(os.environ.get('OPENAI_API_KEY')), open('/proc/self/environ', 'rb').read().count(b'sk-gone'), "
        "os.environ['KEEP_ME'])"
    )
    env = {"OPENAI_API_KEY": "sk-gone", "KEEP_ME": "kept", "PYTHONPATH": ":".join(sys.path)}
    output = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert output.split() == ["None", "0", "kept"]
