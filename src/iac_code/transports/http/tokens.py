"""The tokens file: one principal per token, only the token's SHA-256 digest stored.

    {"tokens": [{"name": "alice", "sha256": "<hex digest of the token>", "role": "admin"}]}

`iac-code token add NAME [--admin]` makes a random token, prints it once and stores its digest here
(the file 0600). The server reads the file again when it changes, so a new token works at once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from iac_code.config import ConfigError
from iac_code.principals import LOCAL, Principal

logger = logging.getLogger(__name__)

SHARED = "shared"  # the one shared token's principal (IACCODE_ACP_HTTP_TOKEN)
RESERVED_NAMES = frozenset({LOCAL.name, SHARED})
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
_DIGEST = re.compile(r"[0-9a-f]{64}")


def is_principal_name(name: object) -> bool:
    """The one rule for a principal's name, whichever way it authenticates (tokens file, JWT `sub`): it is
    printed in logs and in `iac-code audit`, so no spaces, newlines or other control characters."""
    return isinstance(name, str) and bool(_NAME.fullmatch(name)) and name not in RESERVED_NAMES


NAME_RULE = "letters, digits, '.', '_', '@' or '-' (at most 128, not local or shared)"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenEntry:
    principal: Principal
    sha256: str


def read_tokens(path: Path) -> list[TokenEntry]:
    """The entries of the tokens file ([] when there is none); ConfigError naming the file and the entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the tokens file {path}: {exc}") from None
    entries = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError(f'{path} must hold {{"tokens": [...]}}')
    found = []
    for index, entry in enumerate(entries):
        problem = _entry_problem(entry)
        if problem:
            raise ConfigError(f"{path}: tokens[{index}]: {problem}")
        found.append(TokenEntry(Principal(entry["name"], admin=entry.get("role") == "admin"), entry["sha256"].lower()))
    return found


def _entry_problem(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return "not a JSON object"
    name, sha256, role = entry.get("name"), entry.get("sha256"), entry.get("role")
    if not is_principal_name(name):
        return f"name must be {NAME_RULE}"
    if not isinstance(sha256, str) or not _DIGEST.fullmatch(sha256.lower()):
        return "sha256 must be the hex SHA-256 digest of the token"
    if role not in (None, "admin"):
        return 'role must be "admin" when given'
    return None


def add_token(path: Path, name: str, *, admin: bool) -> str:
    """A new random token for `name`, its digest added to the file (created 0600); the token itself is
    returned and stored nowhere. ValueError for a bad or taken name."""
    if not is_principal_name(name):
        raise ValueError(f"invalid principal name {name!r}: {NAME_RULE}")
    entries = read_tokens(path)
    if any(entry.principal.name == name for entry in entries):
        raise ValueError(f"{name} already has a token in {path}")
    token = secrets.token_urlsafe(32)
    rows = [_row(entry) for entry in entries]
    rows.append(_row(TokenEntry(Principal(name, admin), digest(token))))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({"tokens": rows}, file, indent=2)
        file.write("\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    return token


def _row(entry: TokenEntry) -> dict[str, str]:
    row = {"name": entry.principal.name, "sha256": entry.sha256}
    return {**row, "role": "admin"} if entry.principal.admin else row


class TokensFile:
    """The file's principals, read again whenever the file changes (size, time or inode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._entries: list[TokenEntry] = []
        self._refresh()  # at start-up a bad file is a ConfigError (exit 2)

    def principal(self, token: str) -> Principal | None:
        """The principal `token` stands for; every digest is compared, in constant time."""
        try:
            self._refresh()
        except ConfigError as exc:  # edited badly while serving: keep the tokens read before
            logger.error("%s (the tokens read before stay in force)", exc)
        presented = digest(token).encode()
        found = None
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.sha256.encode()):
                found = entry.principal
        return found

    def _refresh(self) -> None:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._seen, self._entries = None, []
            return
        seen = (status.st_ino, status.st_size, status.st_mtime_ns)
        if seen != self._seen:
            self._seen = seen  # a bad file is reported once, not on every request
            self._entries = read_tokens(self.path)
