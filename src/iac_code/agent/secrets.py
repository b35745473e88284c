"""Which secrets a tool's result must not carry, and the result without them (redaction.py finds them).

ToolCalls redacts every result at the one place it is recorded (`tool_calls.ToolCalls._finish`), before the
history (and so the model and the store), the audit recorder and the client see it. The secrets:

- the agent's own: the model key (`api_key`, and the preset key variables of credentials.SECRET_VARIABLES as
  the environment held them at start), the HTTP server's shared token, the password of the database URL, and
  the tokens file's tokens (known by their digests only: found when a token stands alone);
- cloud credentials (cloud_credentials.py's table) the environment held at start, when the variable's name
  says it is a secret (KEY, SECRET, TOKEN, PASSWORD, CREDENTIALS) and its value is not a path: a region, a
  profile or a project id is ordinary output;
- what only the call knows (`ToolResult.secrets`: the guard's token of a bash call);
- the credential shapes of redaction.SHAPES, whoever's they are.

A result that had something redacted is shown as its text: the editor's terminal, which shows the command's
own output, is no longer named on it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from iac_code.cloud_credentials import credential_variables
from iac_code.config import Settings
from iac_code.credentials import SECRET_VARIABLES
from iac_code.messages import Diff, Resource
from iac_code.redaction import Digested, Redactor, Shapes, Values
from iac_code.tools.base import ToolResult

MODEL_KEY = "the model API key"
HTTP_TOKEN = "the HTTP token"
DATABASE_PASSWORD = "the database password"
TOKENS_FILE_TOKEN = "a tokens file token"

_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS")


def session_redactor(settings: Settings) -> Redactor:
    return Redactor(
        [Values(agent_secrets(settings)), Shapes(), Digested(TOKENS_FILE_TOKEN, TokenDigests(settings.tokens_path))]
    )


def agent_secrets(settings: Settings) -> dict[str, str]:
    """Name → value of every secret the settings and the environment at start hold (empty ones left out)."""
    found = {name: value for name, value in settings.env.items() if name in SECRET_VARIABLES}
    found |= cloud_secrets(settings.env)
    found |= {MODEL_KEY: settings.api_key, HTTP_TOKEN: settings.http_token}
    found[DATABASE_PASSWORD] = _password(settings.database_url)
    return {name: value for name, value in found.items() if value}


def _password(url: str) -> str:
    try:
        return urlsplit(url).password or ""
    except ValueError:  # not a URL: the store refuses it at start
        return ""


def cloud_secrets(environment: Mapping[str, str]) -> dict[str, str]:
    """The credential variables of `environment` that hold a secret, not a region, a profile or a path."""
    return {
        name: value
        for name, value in credential_variables(environment).items()
        if _SECRET_NAME.search(name) and not value.startswith(("/", "~", "./"))
    }


class TokenDigests:
    """The tokens file's digests, read again when the file changes (as the HTTP server reads it)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int, int] | None = None
        self._digests: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        try:
            status = self._path.stat()
        except OSError:
            return frozenset()
        seen = (status.st_ino, status.st_size, status.st_mtime_ns)
        if seen != self._seen:
            self._seen, self._digests = seen, _digests_in(self._path)
        return self._digests


def _digests_in(path: Path) -> frozenset[str]:
    """Its entries' `sha256` fields; a file the server would refuse (transports/http/tokens.py says why)
    gives those it can read."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8")).get("tokens")
    except (OSError, ValueError, AttributeError):
        return frozenset()
    if not isinstance(entries, list):
        return frozenset()
    return frozenset(
        entry["sha256"].lower() for entry in entries if isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
    )


def redacted_result(result: ToolResult, redactor: Redactor) -> ToolResult:
    """`result` with the secrets out of everything the model or the client reads: its text, raw output, diff
    and blocks (an image's pixels are not read); `secrets` spent."""
    redactor = redactor.adding(result.secrets)
    redacted = dataclasses.replace(
        result,
        text=redactor.redact(result.text),
        raw_output=_redacted_json(result.raw_output, redactor),
        diff=_redacted_diff(result.diff, redactor),
        content=[Resource(_redacted_json(b.block, redactor)) if isinstance(b, Resource) else b for b in result.content],
        secrets={},
    )
    if (redacted.text, redacted.raw_output, redacted.diff, redacted.content) != (
        result.text,
        result.raw_output,
        result.diff,
        result.content,
    ):
        redacted.terminal_id = None  # the terminal would show the output as the command printed it
    return redacted


def _redacted_diff(diff: Diff | None, redactor: Redactor) -> Diff | None:
    if diff is None:
        return None
    old = None if diff.old_text is None else redactor.redact(diff.old_text)
    return Diff(diff.path, old, redactor.redact(diff.new_text))


def _redacted_json(value: Any, redactor: Redactor) -> Any:
    """`value` with its strings redacted; itself when none holds a secret, found in one pass over them all
    (a plan's raw output has thousands of strings: 90 ms one by one, 6 ms together)."""
    joined = "\n".join(_strings(value))
    return value if redactor.redact(joined) == joined else _each_redacted(value, redactor)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _each_redacted(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {key: _each_redacted(item, redactor) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_each_redacted(item, redactor) for item in value)
    return value
