"""Where the agent keeps the credentials it stored for the user: `<config dir>/credentials.json`, mode 0600.

`{"api_key": "..."}`: the model key a sign-in (`iac-code auth login`) saved. The settings read it as a key
source above config.json and below the environment (config.load_settings); ACP's `logout` deletes it
(providers/sign_in.py). Nothing else is kept here, so deleting the file is forgetting everything stored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FILE_NAME = "credentials.json"


def credentials_path(config_dir: Path) -> Path:
    return config_dir / FILE_NAME


def stored_api_key(config_dir: Path) -> str:
    """The stored key; "" when none is stored or the file does not hold one (a damaged file is not a key)."""
    try:
        data = json.loads(credentials_path(config_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    key = data.get("api_key") if isinstance(data, dict) else None
    return key if isinstance(key, str) else ""


def store_api_key(config_dir: Path, api_key: str) -> None:
    """Keep `api_key` for the user: written whole (a reader never sees half a file), readable by the user only."""
    config_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = credentials_path(config_dir)
    partial = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({"api_key": api_key}, file)
    os.replace(partial, path)


def forget_credentials(config_dir: Path) -> bool:
    """Delete the stored credentials; whether there were any."""
    try:
        credentials_path(config_dir).unlink()
    except FileNotFoundError:
        return False
    return True
