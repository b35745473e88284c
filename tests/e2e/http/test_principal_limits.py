"""What one principal may hold of a shared server (a tokens file: alice and bob): past its connections or its
open requests it gets 429 with a body saying which limit, and the other principal is served as before."""

from __future__ import annotations

import httpx
import pytest
from tests.e2e.http.client import INIT, AcpHttp
from tests.e2e.http.server_process import http_server
from tests.e2e.http.test_principals import add_token
from tests.e2e.http.ws_client import acp_socket
from tests.processes import within
from websockets.exceptions import InvalidStatus


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_one_principal_cannot_fill_the_server(model, tmp_path):
    tokens_file = tmp_path / "tokens.json"
    token = {name: add_token(tokens_file, name) for name in ("alice", "bob")}
    env = {
        "IAC_CODE_TOKENS_FILE": str(tokens_file),
        "IAC_CODE_HTTP_PRINCIPAL_CONNECTIONS": "2",
        "IAC_CODE_HTTP_PRINCIPAL_REQUESTS": "3",
    }
    with http_server(model.url, env=env) as server, httpx.Client(timeout=10) as http:
        cwd = str(server.workspace)
        # Connections: alice's third initialize is refused, over HTTP and over a WebSocket.
        first, second = AcpHttp(server.url, bearer(token["alice"])), AcpHttp(server.url, bearer(token["alice"]))
        third = http.post(server.url, json=INIT, headers=bearer(token["alice"]))
        assert third.status_code == 429 and "too many connections for alice (2" in third.json()["error"]
        async with acp_socket(server.url, headers=bearer(token["alice"]), initialize=False) as socket:
            await socket.send(INIT)
            refused = await socket.next()
            assert refused["error"]["data"]["status"] == 429
        bobs = AcpHttp(server.url, bearer(token["bob"]))

        # Open requests: alice's two connection streams and a session stream fill her three.
        streams = [first.stream(), second.stream()]
        session_id = first.new_session(streams[0], cwd)
        streams.append(first.stream(**{"Acp-Session-Id": session_id}))
        assert all(stream.status == 200 for stream in streams)
        one_more = second.stream(**{"Acp-Session-Id": session_id})
        assert one_more.status == 429
        posted = first.post({"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}})
        assert posted.status_code == 429 and "too many open requests for alice (3" in posted.json()["error"]
        with pytest.raises(InvalidStatus) as upgrade:
            async with acp_socket(server.url, headers=bearer(token["alice"]), initialize=False):
                pass
        assert upgrade.value.response.status_code == 429

        # Bob is served as before; alice again once she closes a stream.
        bobs_stream = bobs.stream()
        assert bobs.new_session(bobs_stream, cwd)
        streams.pop().close()
        session_list = {"jsonrpc": "2.0", "id": 10, "method": "session/list", "params": {}}
        assert within(10, lambda: first.post(session_list).status_code == 202)  # once the server saw it close
        for stream in (*streams, one_more, bobs_stream):
            stream.close()
        for client in (first, second, bobs):
            client.close()
