"""Signing out and in again, for this process (ACP's `logout` and `authenticate`).

Logout deletes the credentials stored for the user (stored_credentials.py) and marks the process signed out:
no key is used then, not even one from the environment or config.json, whose owner asked to be signed out
of this agent; every session opened (new, load, resume, fork) is refused as auth_required, and `initialize`
lists the way to sign in. Sessions already open keep the provider they had until they end. `authenticate`
reads the key sources again (a sign-in may have stored a new key) and signs the process back in when the
model can be used with them.
"""

from __future__ import annotations

from iac_code.config import ConfigError, Settings, load_settings
from iac_code.providers.presets import check_settings
from iac_code.stored_credentials import forget_credentials


def sign_out(settings: Settings) -> None:
    forget_credentials(settings.config_dir)
    settings.signed_out = True


def sign_in(settings: Settings) -> None:
    """Sign in with the key the settings' sources hold now; ConfigError naming what to set when the model
    cannot be used with them (the process stays signed out)."""
    settings.api_key = load_settings(settings.env).api_key
    settings.signed_out = False
    try:
        check_settings(settings)
    except ConfigError:
        settings.signed_out = True
        raise
