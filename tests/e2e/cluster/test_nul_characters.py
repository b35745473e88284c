"""U+0000 in what clients, models and tools say, through two instances sharing PostgreSQL (whose `text` and
`jsonb` cannot hold it): every message is answered, every update carries the NUL unchanged, and the
session loads back byte for byte through the other instance."""

from __future__ import annotations

from typing import Any

from tests.e2e.cluster.conftest import Cluster, cluster
from tests.e2e.http.client import AcpHttp, SseListener, is_response
from tests.fakes.openai_server import ScriptedOpenAI

PROMPT = "pasted\x00prompt"
REPLY = "model\x00said"
TOOL_OUTPUT = "tool\x00output"


def _updates(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["data"]["params"]["update"]
        for e in events
        if e["data"].get("method") == "session/update" and e["data"]["params"]["update"]["sessionUpdate"] == kind
    ]


def _texts(events: list[dict[str, Any]], kind: str) -> list[str]:
    return [u["content"]["text"] for u in _updates(events, kind)]


def _tool_outputs(events: list[dict[str, Any]]) -> list[str]:
    return [
        block["content"]["text"]
        for u in _updates(events, "tool_call_update")
        for block in u.get("content") or []
        if block.get("type") == "content" and block["content"].get("type") == "text"
    ]


def _client_on_another_instance(url: str, host: str) -> AcpHttp:
    for _ in range(6):  # round-robin: at most a couple of tries
        client = AcpHttp(url)
        if client.initialize_headers["iac-instance-id"] != host:
            return client
        client.close()
    raise AssertionError(f"every initialize landed on {host}")


def _call(client: AcpHttp, stream: SseListener, request_id: Any, method: str, params: dict) -> list[dict]:
    response = client.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    assert response.status_code == 202, response.text
    return stream.until(lambda data: data.get("id") == request_id and "method" not in data)


def test_nul_in_prompt_reply_and_tool_output_is_kept_through_the_database(nginx_available, model, pg_url):
    with cluster(model.url, pg_url) as two:
        _prompt_list_and_load(two, model)


def _prompt_list_and_load(two: Cluster, model: ScriptedOpenAI) -> None:
    command = r"printf 'tool\000output'"
    model.add({"text": REPLY, "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"})
    client = AcpHttp(two.url)
    host = client.initialize_headers["iac-instance-id"]
    stream = client.stream()
    session_id = client.new_session(stream, str(two.workspace))

    assert client.prompt(session_id, PROMPT).status_code == 202
    asked = stream.until(lambda d: d.get("method") == "session/request_permission")
    allow = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    assert client.post({"jsonrpc": "2.0", "id": asked[-1]["data"]["id"], "result": allow}).status_code == 202
    live = asked + stream.until(is_response(3))
    assert live[-1]["data"]["result"]["stopReason"] == "end_turn", live[-1]
    assert "".join(_texts(live, "agent_message_chunk")) == REPLY + "done"
    assert TOOL_OUTPUT in "".join(_tool_outputs(live))
    assert [u["title"] for u in _updates(live, "session_info_update")] == [PROMPT]
    sent = model.requests[-1]["messages"]  # the model got the prompt and the tool's output as they were
    assert [m["content"] for m in sent if m["role"] == "user"] == [PROMPT]
    assert [TOOL_OUTPUT in m["content"] for m in sent if m["role"] == "tool"] == [True]

    # A request whose id holds a NUL is answered with that id; an unknown method holding one gets its error.
    listed = _call(client, stream, "id\x004", "session/list", {"cwd": str(two.workspace)})[-1]["data"]
    assert [s["title"] for s in listed["result"]["sessions"]] == [PROMPT]
    unknown = _call(client, stream, 5, "no/such\x00method", {"x": "\x00"})[-1]["data"]
    assert unknown["error"]["code"] == -32601, unknown
    # Answered as a single instance answers them: nothing listed there, nothing to delete.
    assert _call(client, stream, 7, "session/list", {"cwd": "/no\x00where"})[-1]["data"]["result"]["sessions"] == []
    assert "result" in _call(client, stream, 8, "session/delete", {"sessionId": "no\x00such"})[-1]["data"]

    other = _client_on_another_instance(two.url, host)
    other_stream = other.stream()
    load = {"sessionId": session_id, "cwd": str(two.workspace), "mcpServers": []}
    replayed = _call(other, other_stream, 6, "session/load", load)
    assert "result" in replayed[-1]["data"], replayed[-1]
    assert _texts(replayed, "user_message_chunk") == [PROMPT]
    assert "".join(_texts(replayed, "agent_message_chunk")) == REPLY + "done"
    assert _tool_outputs(replayed) == _tool_outputs(live)
    for listener, http in ((stream, client), (other_stream, other)):
        listener.close()
        http.close()
