"""JSON from outside the process (a client, a model, a file on disk), parsed so it can never hurt.

`json.loads` alone lets through what later breaks far from the input: a line of 1,000 nested `[`
raises RecursionError (not a ValueError, so it escaped every handler); `NaN`, `Infinity` and
`1e999` come back as floats that `json.dumps` writes as non-JSON; `"\\ud800"` comes back as a lone
surrogate that no UTF-8 encoder accepts, so it poisons every file or request it reaches. Here all
three are settled at the door: too deep is malformed JSON, a non-finite number is refused, and a
lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from iac_code.encodable import encodable, encodable_value

# No message, record or tool call of ours nests anywhere near this deep.
MAX_DEPTH = 64

_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # `\\udc00`: maybe a lone one once decoded
_RAW_SURROGATE = re.compile("[\ud800-\udfff]")  # only a str that never was UTF-8 can hold one


class JsonError(ValueError):
    """Not usable JSON: malformed, not UTF-8, or nested deeper than allowed."""


class NonFiniteNumber(JsonError):
    """Valid JSON syntax aside, a NaN or an infinity, which no JSON writer can give back."""


def loads(data: bytes | str, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """The value `data` holds, with lone surrogates replaced; raises JsonError (a ValueError).

    `max_depth=None` skips the depth walk (the nesting is then bounded by Python's recursion limit
    alone, still reported as a JsonError): for hot paths whose values are checked field by field.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
        if max_depth is not None and text.count("[") + text.count("{") > max_depth:
            _check_depth(value, max_depth)  # only then can the nesting exceed it
        if ("\\u" in text and _ESCAPED_SURROGATE.search(text)) or (text is data and _RAW_SURROGATE.search(text)):
            value = encodable_value(value)
    except RecursionError:
        raise JsonError("nested too deeply") from None
    except UnicodeDecodeError:
        raise JsonError("not UTF-8") from None
    except JsonError:
        raise
    except ValueError as exc:
        raise JsonError(str(exc)) from None
    return value


def dumps_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON that never fails on a stray lone surrogate (it is written as U+FFFD)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or infinity computed somewhere: null, as JavaScript writes it
        text = json.dumps(_finite_only(value), ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return encodable(text).encode()


def _refuse_constant(name: str) -> Any:
    raise NonFiniteNumber(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise NonFiniteNumber(f"{text[:20]} is out of range")
    return number


def _finite_only(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_only(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_only(item) for item in value]
    return value


def _check_depth(value: Any, max_depth: int) -> None:
    pending: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while pending:
        current, depth = pending.pop()
        if depth > max_depth:
            raise JsonError(f"nested deeper than {max_depth} levels")
        children = current.values() if isinstance(current, dict) else current
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
