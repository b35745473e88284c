"""The seed's curl session, run literally with curl against the real server."""

from __future__ import annotations

import json
import subprocess

from tests.acp_schema import check

WALKTHROUGH = r"""
set -u
U="$ACP_URL"
# Step 1: Initialize — creates a connection and returns the Connection ID
CONN_ID=$(curl -s -D - -X POST $U \
  -H "Content-Type: application/json" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"curl","version":"1.0"}}}' \
  | grep -i 'acp-connection-id' | awk '{print $2}' | tr -d '\r')
echo "Connection ID: $CONN_ID"

# Step 2: Open the SSE stream (run in background)
curl -s -N $U -H "Acp-Connection-Id: $CONN_ID" > "$SSE_OUT" &
SSE_PID=$!

# Step 3: Create a session
curl -s -o /dev/null -w "session/new %{http_code}\n" -X POST $U \
  -H "Content-Type: application/json" \
  -H "Acp-Connection-Id: $CONN_ID" \
  -d '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"'"$WORKSPACE"'"}}'

# The session id arrives on the stream.
for _ in $(seq 100); do
  SESSION_ID=$(grep -o '"sessionId":"[^"]*"' "$SSE_OUT" | head -1 | cut -d'"' -f4)
  [ -n "$SESSION_ID" ] && break
  sleep 0.1
done

# Step 4: Send a prompt
curl -s -o /dev/null -w "session/prompt %{http_code}\n" -X POST $U \
  -H "Content-Type: application/json" \
  -H "Acp-Connection-Id: $CONN_ID" \
  -d '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"'"$SESSION_ID"'","prompt":[{"type":"text","text":"Hello"}]}}'

for _ in $(seq 100); do
  grep -q '"stopReason"' "$SSE_OUT" && break
  sleep 0.1
done

# Step 5: Close the connection
curl -s -o /dev/null -w "delete %{http_code}\n" -X DELETE $U -H "Acp-Connection-Id: $CONN_ID"
curl -s -o /dev/null -w "after delete %{http_code}\n" -X DELETE $U -H "Acp-Connection-Id: $CONN_ID"

# Clean up background SSE process
kill $SSE_PID 2>/dev/null
wait $SSE_PID 2>/dev/null
exit 0
"""


def test_seed_curl_walkthrough(live, model, tmp_path):
    model.add({"text": "Hello from the scripted model"})
    sse_out = tmp_path / "sse.txt"
    env = {"ACP_URL": live.url, "SSE_OUT": str(sse_out), "WORKSPACE": str(live.workspace), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", "-c", WALKTHROUGH], env=env, capture_output=True, text=True, timeout=60)

    assert "Connection ID: " in result.stdout and len(result.stdout.split("Connection ID: ")[1].split()[0]) == 36
    assert "session/new 202" in result.stdout
    assert "session/prompt 202" in result.stdout
    assert "delete 200" in result.stdout
    assert "after delete 400" in result.stdout
    events = _parse_sse(sse_out.read_text())
    ids = [int(e["id"]) for e in events]
    assert ids == list(range(1, len(ids) + 1))
    assert all(e["event"] == "message" and e["retry"] == "5000" for e in events)
    messages = [json.loads(e["data"]) for e in events]
    check.check_transcript("the walkthrough's SSE stream", messages, {2: "session/new", 3: "session/prompt"})
    assert messages[0]["id"] == 2 and messages[0]["result"]["sessionId"]
    text = "".join(
        m["params"]["update"]["content"]["text"]
        for m in messages
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "Hello from the scripted model"
    assert messages[-1]["id"] == 3 and messages[-1]["result"]["stopReason"] == "end_turn"


def _parse_sse(text: str) -> list[dict[str, str]]:
    events = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in fields:
            events.append(fields)
    return events
