"""Over HTTP as on stdio: a failed model call answers session/prompt with a JSON-RPC error on the SSE stream,
-32000 for a refused key, -32603 with the provider's words for any other failure (after retries)."""

from __future__ import annotations

from tests.e2e.http.client import AcpHttp, agent_text, is_response


def test_a_failed_model_call_is_the_prompts_error(live, model):
    client = AcpHttp(live.url)
    stream = client.stream()
    session_id = client.new_session(stream, str(live.workspace))

    model.add({"status": 401, "text": "invalid api key"})
    assert client.prompt(session_id, "hi", request_id=3).status_code == 202
    refused = stream.until(is_response(3))
    assert refused[-1]["data"]["error"]["code"] == -32000 and agent_text(refused) == ""

    model.add(*[{"status": 502, "text": "bad gateway upstream"}] * 3)  # the call and the SDK's two retries
    assert client.prompt(session_id, "again", request_id=4).status_code == 202
    failed = stream.until(is_response(4))[-1]["data"]["error"]
    assert failed["code"] == -32603 and "HTTP 502: bad gateway upstream" in failed["message"]
    stream.close()
    client.close()
