"""The agent's own secrets in its environment: read once into the settings, then withheld from everyone.

A command the model runs could otherwise print them: from its own environment, or from the agent's
(`/proc/$PPID/environ` is readable by the agent's children, and keeps showing the environment the
process started with even after `os.environ` forgets a variable). Cloud credentials (cloud_credentials.py:
AWS_*, ALICLOUD_*, KUBECONFIG, ...) are withheld the same way, and held here for the guard, which hands them to
the one run of a cloud CLI that may use them (guard/handover.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from iac_code.cloud_credentials import credential_variables, is_credential_variable

# ctypes and logging are imported where they are needed: the warm launcher imports this module on its way to
# the hand-off (warm/launch.py), where they would cost it 6 ms.

SECRET_VARIABLES = frozenset(
    {
        "IAC_CODE_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",  # the anthropic SDK would also send it to any anthropic_compatible endpoint
        "DASHSCOPE_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENROUTER_API_KEY",
        "IACCODE_ACP_HTTP_TOKEN",  # the HTTP server's bearer token
        "IAC_CODE_ACP_HTTP_TOKEN",  # the same, under the project's prefix (config.ENV_ALIASES)
    }
)


def without_secrets(environment: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if name not in SECRET_VARIABLES}


# The cloud credentials this process started with, once withheld from its environment.
_held_cloud_credentials: dict[str, str] | None = None


def held_cloud_credentials() -> dict[str, str]:
    """The cloud credentials the agent was given: what the guard hands to a run allowed to use them."""
    if _held_cloud_credentials is None:  # library use: nothing withheld yet
        return credential_variables(os.environ)
    return dict(_held_cloud_credentials)


def withhold_from_environment() -> None:
    """Remove the secret variables and the cloud credentials from this process's environment, including the
    block the kernel shows in /proc/self/environ (the credentials are held for the guard). Call it once the
    settings (which keep their own copy of the keys) are loaded."""
    global _held_cloud_credentials
    if _held_cloud_credentials is None:
        _held_cloud_credentials = credential_variables(os.environ)
    present = [name for name in os.environ if name in SECRET_VARIABLES or is_credential_variable(name)]
    if not present:
        return
    import ctypes

    blocks = _environment_entries(present)
    for name in present:
        del os.environ[name]  # unsetenv: drops the entry from environ[], not its bytes
    for address, size in blocks:
        ctypes.memset(address, 0, size)


def _environment_entries(names: Iterable[str]) -> list[tuple[int, int]]:
    """(address, length) of each `NAME=value` string in the C environment for these names."""
    import ctypes

    prefixes = tuple(f"{name}=".encode() for name in names)
    try:
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):  # no C library environment to reach
        import logging

        logging.getLogger(__name__).debug("cannot reach the C environment; secrets removed from os.environ only")
        return []
    found: list[tuple[int, int]] = []
    index = 0
    while (address := environ[index]) is not None:
        entry = ctypes.string_at(address)
        if entry.startswith(prefixes):
            found.append((address, len(entry)))
        index += 1
    return found
