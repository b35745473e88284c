"""ACP's additionalDirectories over HTTP against the real agent: a write into the additional directory is asked
(by SSE) and done, session/list shows the directory, and a relative one is -32602 naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.http.client import AcpHttp, SseListener, is_response


def request(client: AcpHttp, stream: SseListener, request_id: int, method: str, params: Any) -> dict[str, Any]:
    assert client.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).status_code == 202
    return stream.until(is_response(request_id))[-1]["data"]


def test_a_write_into_an_additional_directory_over_http(live, model, tmp_path: Path):
    extra = (tmp_path / "modules").resolve()
    extra.mkdir()
    target = extra / "main.tf"
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": str(target), "content": "# ok\n"}}]},
        {"text": "written"},
    )
    client = AcpHttp(live.url)
    stream = client.stream()
    params = {"cwd": str(live.workspace), "mcpServers": [], "additionalDirectories": [str(extra)]}
    session_id = request(client, stream, 2, "session/new", params)["result"]["sessionId"]
    assert client.prompt(session_id, "write it").status_code == 202
    asked = stream.until(lambda d: d.get("method") == "session/request_permission")[-1]["data"]
    assert asked["params"]["toolCall"]["locations"] == [{"path": str(target)}]
    answer = {
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    }
    assert client.post(answer).status_code == 202
    assert stream.until(is_response(3))[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert target.read_text() == "# ok\n"

    listed = request(client, stream, 4, "session/list", {"cwd": str(live.workspace)})["result"]["sessions"]
    assert [s["additionalDirectories"] for s in listed if s["sessionId"] == session_id] == [[str(extra)]]
    bad = {"cwd": str(live.workspace), "mcpServers": [], "additionalDirectories": ["modules"]}
    error = request(client, stream, 5, "session/new", bad)["error"]
    assert (error["code"], error["data"]) == (-32602, {"additionalDirectories[0]": "not an absolute path: 'modules'"})
    stream.close()
    client.close()
