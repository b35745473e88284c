"""Two instances behind round-robin nginx serve as one: the seed's curl walkthrough with every request on
another instance than the one before, and the official SDK client, unchanged."""

from __future__ import annotations

import itertools
import json
import subprocess

from tests.acp_schema import check
from tests.e2e.http import test_sdk_client as sdk
from tests.e2e.http.client import AcpHttp, agent_text, is_response
from tests.e2e.http.test_curl_walkthrough import WALKTHROUGH, _parse_sse

# The seed's walkthrough, each curl also saving its response headers (…/h1 … h6) to tell who answered,
# and session/new waiting for the stream's headers so that requests reach the balancer in script order.
HEADERS = {
    "SSE_PID=$!": 'SSE_PID=$!\nfor _ in $(seq 100); do [ -s "$HEADERS/h2" ] && break; sleep 0.05; done',
    "| grep -i 'acp-connection-id'": "| tee \"$HEADERS/h1\" | grep -i 'acp-connection-id'",
    "curl -s -N $U": 'curl -s -N -D "$HEADERS/h2" $U',
    'curl -s -o /dev/null -w "session/new': 'curl -s -D "$HEADERS/h3" -o /dev/null -w "session/new',
    'curl -s -o /dev/null -w "session/prompt': 'curl -s -D "$HEADERS/h4" -o /dev/null -w "session/prompt',
    'curl -s -o /dev/null -w "delete': 'curl -s -D "$HEADERS/h5" -o /dev/null -w "delete',
    'curl -s -o /dev/null -w "after delete': 'curl -s -D "$HEADERS/h6" -o /dev/null -w "after delete',
}


def test_seed_curl_walkthrough_with_every_request_on_another_instance(two, model, tmp_path):
    script = WALKTHROUGH
    for original, with_headers in HEADERS.items():
        assert script.count(original) == 1, original
        script = script.replace(original, with_headers)
    model.add({"text": "Hello from the scripted model"})
    sse_out = tmp_path / "sse.txt"
    env = {
        "ACP_URL": two.url,
        "SSE_OUT": str(sse_out),
        "WORKSPACE": str(two.workspace),
        "HEADERS": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)

    for expected in ("session/new 202", "session/prompt 202", "delete 200", "after delete 400"):
        assert expected in result.stdout, result.stdout + result.stderr
    answered_by = [_instance(tmp_path / f"h{n}") for n in range(1, 7)]
    assert set(answered_by) == set(two.instances)
    assert all(a != b for a, b in itertools.pairwise(answered_by)), answered_by
    events = _parse_sse(sse_out.read_text())
    assert [int(e["id"]) for e in events] == list(range(1, len(events) + 1))
    messages = [json.loads(e["data"]) for e in events]
    check.check_transcript("the walkthrough's SSE stream", messages, {2: "session/new", 3: "session/prompt"})
    assert messages[0]["id"] == 2 and messages[-1]["id"] == 3 and messages[-1]["result"]["stopReason"] == "end_turn"
    text = "".join(
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "Hello from the scripted model"


async def test_sdk_client_through_the_balancer(two, model):
    # New session, a prompt whose write is allowed, then a second connection loads it and prompts again:
    # each HTTP request of the SDK's client goes to whichever instance nginx picks.
    await sdk.test_sdk_client_loads_a_session_on_a_second_connection(two, model)


def _instance(headers_file) -> str:
    for line in headers_file.read_text().splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "iac-instance-id":
            return value.strip()
    raise AssertionError(f"no Iac-Instance-Id in {headers_file.read_text()!r}")


def test_list_fork_and_delete_from_other_connections_whatever_instance_serves_them(two, model):
    first, second = AcpHttp(two.url), AcpHttp(two.url)
    first_stream, second_stream = first.stream(), second.stream()
    session_id = first.new_session(first_stream, str(two.workspace))
    model.add({"text": "kept in the database"})
    assert first.prompt(session_id, "remember this").status_code == 202
    first_stream.until(is_response(3))

    def call(request_id: int, method: str, params: dict) -> dict:
        assert second.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).status_code == 202
        return second_stream.until(is_response(request_id))[-1]["data"]

    listed = call(10, "session/list", {"cwd": str(two.workspace)})["result"]["sessions"]
    assert session_id in [s["sessionId"] for s in listed]
    fork = call(11, "session/fork", {"sessionId": session_id, "cwd": str(two.workspace), "mcpServers": []})
    fork_id = fork["result"]["sessionId"]
    assert "result" in call(12, "session/delete", {"sessionId": session_id})  # its idle holder lets it go
    listed = call(13, "session/list", {"cwd": str(two.workspace)})["result"]["sessions"]
    assert fork_id in [s["sessionId"] for s in listed] and session_id not in [s["sessionId"] for s in listed]
    model.add({"text": "the fork remembers"})
    assert second.prompt(fork_id, "do you?", request_id=14).status_code == 202
    assert agent_text(second_stream.until(is_response(14))) == "the fork remembers"
    assert "kept in the database" in json.dumps(model.requests[-1]["messages"])
    for stream, client in ((first_stream, first), (second_stream, second)):
        stream.close()
        client.close()
