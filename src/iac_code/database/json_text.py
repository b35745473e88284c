"""How text reaches PostgreSQL: always as JSON text, which PostgreSQL stores and never decodes.

PostgreSQL cannot hold U+0000 in a `text` value, and `jsonb` (like every operator that looks inside a
`json` value: `->`, `->>`, `json_typeof`) refuses the escape `\\u0000`, while a client or a model may send
it anywhere (a pasted prompt, a file's content). JSON writes U+0000 as those six ASCII characters, and a
`json` column keeps its input verbatim, so a value written as JSON text comes back exactly as written:

- documents (messages, events, permissions) go to `json` columns, never `jsonb`;
- single strings a client controls (a session's title, cwd...) go to `text` columns as JSON string
  literals (`"a\\u0000b"`), compared as such;
- whatever must be known about a document (is it a request, what is its id) is found by Python before
  it is stored, never by SQL reading it.
"""

from __future__ import annotations

import json
from typing import Any

from iac_code.safe_json import dumps_bytes


def to_json_text(value: Any) -> str:
    """`value` as compact JSON (non-ASCII as is, U+0000 escaped); a stray lone surrogate is written as
    U+FFFD, as the file store writes it, rather than failing the statement."""
    return dumps_bytes(value).decode()


def from_json_text(text: str) -> Any:
    """The value `to_json_text` wrote."""
    return json.loads(text)
