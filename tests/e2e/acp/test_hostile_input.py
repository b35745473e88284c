"""Input crafted to break the stdio transport: it is answered, and the process keeps serving."""

from __future__ import annotations

import json


def test_deeply_nested_line_is_a_parse_error_and_serving_goes_on(agent):
    agent.send_line("[" * 1000 + "]" * 1000)
    assert agent.next() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    agent.send_line('{"jsonrpc":"2.0","id":5,"method":"session/list","params":{"x":' + "[" * 900 + "]" * 900 + "}}")
    assert agent.next()["error"]["code"] == -32700
    assert agent.result("initialize", {"protocolVersion": 1})["protocolVersion"] == 1


def test_non_finite_ids_get_an_invalid_request_with_a_null_id(agent):
    for raw_id in ("1e999", "NaN", "-Infinity"):
        agent.send_line(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"session/list","params":{{}}}}')
        error = agent.next()
        assert error["id"] is None and error["error"]["code"] == -32600, raw_id
    assert not agent.stdout_problems  # every line written was JSON (NaN and Infinity are not)
    assert agent.result("session/list", {})["sessions"] is not None


def test_a_line_of_raw_bytes_that_are_not_utf8_is_a_parse_error(agent):
    agent.send_line(b'{"jsonrpc":"2.0","id":1,"method":"\xff"}')
    assert agent.next()["error"]["code"] == -32700
    assert json.dumps(agent.result("session/list", {}))
