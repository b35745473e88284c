"""Text every encoder accepts: lone UTF-16 surrogates replaced by U+FFFD.

A JSON escape such as `"\\ud800"` decodes to a lone surrogate, and so does a file name that is not
UTF-8 (Python keeps its bytes as surrogates). Such a string cannot be written as UTF-8: kept in a
history it breaks every later write, log line and model request. Text from outside (clients,
models, the file system) passes through here once, where it enters.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """`text` with every lone surrogate replaced (a valid pair never survives decoding as two)."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def encodable_value(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, scalars) with every string and key made encodable."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(key) if isinstance(key, str) else key: encodable_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [encodable_value(item) for item in value]
    return value
