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
