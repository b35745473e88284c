"""JSON-RPC 2.0 envelope checks for transports: what to answer input that is not a valid message.

The SDK's Connection silently drops such input; the seed wants -32700 / -32600 answers instead: on stdio
for a line (`decode`), over HTTP for a POST body or a WebSocket text frame (`parse_message`).
"""

from __future__ import annotations

import math
from typing import Any

from iac_code.safe_json import JsonError, NonFiniteNumber, loads

PARSE_ERROR_CODE = -32700
INVALID_REQUEST_CODE = -32600
SERVER_ERROR_CODE = -32000  # the first of the codes JSON-RPC leaves to the server's own errors
_CODE_NAMES = {
    PARSE_ERROR_CODE: "Parse error",
    INVALID_REQUEST_CODE: "Invalid Request",
    SERVER_ERROR_CODE: "Server error",
}
PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR_CODE, "message": "Parse error"}}


def decode(line: bytes | str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(message, None) for a valid JSON-RPC message; (None, error response) otherwise.

    Never raises: too deep or not UTF-8 is a parse error; a NaN or infinity (which could only be
    echoed back as non-JSON) makes the message invalid, answered with a null id.
    """
    try:
        value = loads(line)
    except NonFiniteNumber:
        return None, _invalid(None, "numbers must be finite")
    except JsonError:
        return None, PARSE_ERROR
    problem = envelope_problem(value)
    if problem is None:
        return value, None
    request_id = value.get("id") if isinstance(value, dict) and _valid_id(value.get("id")) else None
    return None, _invalid(request_id, problem)


def _invalid(request_id: Any, reason: str) -> dict[str, Any]:
    return error_response(request_id, INVALID_REQUEST_CODE, reason)


def error_response(request_id: Any, code: int, reason: str, **data: Any) -> dict[str, Any]:
    """The error response to `request_id` (None: a message whose id could not be read), `reason` in its data."""
    error = {"code": code, "message": _CODE_NAMES[code], "data": {"reason": reason, **data}}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def parse_message(body: bytes | str) -> tuple[dict[str, Any] | None, tuple[int, str]]:
    """The message of a POST body or a WebSocket text frame, or the JSON-RPC code (-32700 / -32600) and the
    reason it is refused."""
    try:
        message = loads(body)
    except NonFiniteNumber as exc:
        return None, (INVALID_REQUEST_CODE, f"not a JSON-RPC 2.0 message: {exc}")
    except JsonError as exc:
        return None, (PARSE_ERROR_CODE, f"invalid JSON: {exc}")
    if isinstance(message, list):
        return None, (INVALID_REQUEST_CODE, "JSON-RPC batches are not supported: send one message per request")
    problem = envelope_problem(message)
    if problem is not None:
        return None, (INVALID_REQUEST_CODE, f"not a JSON-RPC 2.0 message: {problem}")
    return message, (0, "")


def is_request(message: dict[str, Any]) -> bool:
    """A request (it awaits a response), not a notification or a response."""
    return "method" in message and "id" in message


def envelope_problem(value: Any) -> str | None:
    """Why `value` is not a JSON-RPC 2.0 request, notification or response; None when it is."""
    if not isinstance(value, dict):
        return "a message must be a JSON object (batches are not supported)"
    if value.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in value and not _valid_id(value["id"]):
        return "id must be a string, a finite number or null"
    if "method" in value:
        if not isinstance(value["method"], str):
            return "method must be a string"
        if "params" in value and not isinstance(value["params"], dict | list):
            return "params must be an object or an array"
        return None
    if "id" not in value:
        return "method is required"
    if ("result" in value) == ("error" in value):
        return "a response needs exactly one of result and error"
    return None


def _valid_id(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
