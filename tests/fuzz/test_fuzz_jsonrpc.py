"""The JSON-RPC decoder and the stdio framing: whatever arrives, the answer is a valid JSON-RPC message
(a parse or invalid-request error) or the message itself, valid and encodable; never an exception."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from iac_code.transports.jsonrpc import decode, envelope_problem
from iac_code.transports.stdio import StdioTransport

from .conftest import FUZZ, NASTY_TEXT, json_values


def strict_json(value: Any) -> Any:
    """`value` written and read back as strict JSON: no NaN, no infinity, valid UTF-8."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return json.loads(text.encode("utf-8").decode("utf-8"), parse_constant=refuse)


def check_outcome(message: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
    assert (message is None) != (error is None)
    if error is not None:
        assert strict_json(error) == error
        assert error["jsonrpc"] == "2.0" and error["error"]["code"] in (-32700, -32600)
        request_id = error["id"]
        assert request_id is None or isinstance(request_id, str | int) or math.isfinite(request_id)
    else:
        assert message is not None and envelope_problem(message) is None
        strict_json(message)  # no NaN, no infinity, no lone surrogate: it can be written back


@settings(FUZZ, max_examples=400)
@given(st.binary(max_size=300))
@example(b"[" * 1000 + b"]" * 1000)
@example(b'{"jsonrpc":"2.0","id":-Infinity,"method":"m"}')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\\udfff"}}')
def test_arbitrary_bytes(line: bytes) -> None:
    check_outcome(*decode(line))


MESSAGE_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.one_of(st.just("2.0"), json_values(3)),
        "id": st.one_of(st.integers(), st.text(), st.none(), st.floats(), json_values(3)),
        "method": st.one_of(st.sampled_from(["initialize", "session/new", "session/prompt"]), NASTY_TEXT),
        "params": json_values(),
        "result": json_values(),
        "error": json_values(),
    },
)


@settings(FUZZ, max_examples=400)
@given(MESSAGE_FIELDS, st.booleans())
def test_message_shaped_json(fields: dict[str, Any], ascii_only: bool) -> None:
    # Python's json writes NaN/Infinity tokens and "\ud800" escapes: exactly what a hostile client sends.
    line = json.dumps(fields, ensure_ascii=ascii_only)
    check_outcome(*decode(line.encode("utf-8", "surrogatepass")))


def nested(depth: int, opener: str, in_message: bool) -> str:
    inner = "[" * depth + "]" * depth if opener == "[" else '{"a":' * depth + "1" + "}" * depth
    return f'{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"x":{inner}}}}}' if in_message else inner


@settings(FUZZ, max_examples=100)
@given(
    st.one_of(
        st.builds(nested, st.integers(0, 5000), st.sampled_from(["[", "{"]), st.booleans()),
        st.lists(st.sampled_from(["[", "]", "{", "}", '"a":', "1", ",", " "]), max_size=3000).map("".join),
    )
)
def test_nesting_of_any_depth(line: str) -> None:
    check_outcome(*decode(line))


@settings(FUZZ, max_examples=150)
@given(st.lists(st.one_of(st.binary(max_size=200), MESSAGE_FIELDS.map(json.dumps).map(str.encode)), max_size=8))
def test_stdio_framing_answers_each_bad_line_once_and_passes_the_good_ones(lines: list[bytes]) -> None:
    data = b"\n".join(lines)

    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        transport = StdioTransport(reader, None)
        answers: list[dict[str, Any]] = []

        async def collect(message: dict[str, Any]) -> None:
            answers.append(message)

        transport.send = collect  # type: ignore[method-assign]
        received = []
        while (message := await transport.receive()) is not None:
            received.append(message)
        return received, answers

    received, answers = asyncio.run(run())
    for message in received:
        check_outcome(message, None)
    for answer in answers:
        check_outcome(None, answer)
    assert len(received) + len(answers) == sum(1 for line in data.split(b"\n") if line.strip())
