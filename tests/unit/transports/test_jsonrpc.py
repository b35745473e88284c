import json

from iac_code.transports.jsonrpc import PARSE_ERROR, decode


def test_valid_messages_pass():
    for line in (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}',
        '{"jsonrpc":"2.0","id":0,"result":{}}',
        '{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"x"}}',
    ):
        message, error = decode(line)
        assert error is None and message is not None


def test_parse_error_and_invalid_requests():
    assert decode("{oops") == (None, PARSE_ERROR)
    _, error = decode('{"jsonrpc":"2.0","id":3,"result":1,"error":{}}')
    assert error["id"] == 3 and error["error"]["code"] == -32600
    _, error = decode('{"jsonrpc":"2.0","id":{"x":1},"method":"m"}')
    assert error["id"] is None and error["error"]["code"] == -32600
    _, error = decode("[]")
    assert error["error"]["code"] == -32600


def test_deeply_nested_input_is_a_parse_error_not_a_crash():
    assert decode("[" * 1000 + "]" * 1000) == (None, PARSE_ERROR)
    assert decode("[" * 100_000) == (None, PARSE_ERROR)
    nested_params = '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":' + "[" * 500 + "]" * 500 + "}}"
    assert decode(nested_params) == (None, PARSE_ERROR)


def test_non_finite_ids_are_invalid_requests_with_a_null_id():
    for raw_id in ("1e999", "-1e999", "NaN", "Infinity", "-Infinity"):
        _, error = decode(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"session/list","params":{{}}}}')
        assert error["id"] is None and error["error"]["code"] == -32600, raw_id
        assert json.loads(json.dumps(error), parse_constant=_not_json) == error


def test_lone_surrogates_in_input_become_replacement_characters():
    message, error = decode(r'{"jsonrpc":"2.0","id":1,"method":"m","params":{"text":"a\ud800b","\udfff":1}}')
    assert error is None and message["params"] == {"text": "a\ufffdb", "\ufffd": 1}
    message, _ = decode(r'{"jsonrpc":"2.0","id":1,"method":"m","params":{"text":"\ud83d\ude00"}}')
    assert message["params"]["text"] == "\U0001f600"  # a valid pair stays one character


def _not_json(name):
    raise AssertionError(f"{name} is not JSON")
