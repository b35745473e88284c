"""Every status code of the HTTP transport, against the real server."""

from __future__ import annotations

import httpx
from tests.e2e.http.client import INIT, AcpHttp


def test_status_codes(live):
    url = live.url
    with httpx.Client(timeout=30) as http:
        assert http.get(f"{live.base}/health").json()["status"] == "ok"
        response = http.post(url, json=INIT)
        assert response.status_code == 200 and response.headers["Acp-Connection-Id"]
        assert response.json()["result"]["protocolVersion"] == 1
        cid = {"Acp-Connection-Id": response.headers["Acp-Connection-Id"]}
        json_type = {"Content-Type": "application/json"}
        notification = b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}'

        assert http.post(url, content=notification, headers={**cid, **json_type}).status_code == 202
        assert http.post(url, content=notification, headers={**cid, "Content-Type": "text/plain"}).status_code == 415
        assert http.post(url, content=notification, headers=cid).status_code == 415
        bad_json = http.post(url, content=b'{"jsonrpc":', headers={**cid, **json_type})
        assert bad_json.status_code == 400 and "invalid JSON" in bad_json.json()["error"]
        batch = http.post(url, content=b"[" + notification + b"]", headers={**cid, **json_type})
        assert batch.status_code == 400 and "batch" in batch.json()["error"]
        assert http.post(url, content=b'"hello"', headers={**cid, **json_type}).status_code == 400
        assert http.post(url, content=b"\xff\xfe", headers={**cid, **json_type}).status_code == 400
        assert http.post(url, content=notification, headers=json_type).status_code == 400
        unknown = {"Acp-Connection-Id": "00000000-0000-0000-0000-000000000000"}
        assert http.post(url, content=notification, headers={**unknown, **json_type}).status_code == 400
        assert http.get(url, headers=unknown).status_code == 400
        assert http.get(url).status_code == 400
        assert http.get(url, headers={**cid, "Accept": "application/json"}).status_code == 406
        assert http.get(url, headers={**cid, "Last-Event-ID": "abc"}).status_code == 400
        assert http.delete(url).status_code == 400

        assert http.delete(url, headers=cid).status_code == 200
        assert http.post(url, content=notification, headers={**cid, **json_type}).status_code == 400
        assert http.get(url, headers=cid).status_code == 400
        assert http.delete(url, headers=cid).status_code == 400


def test_body_size_limit_is_configurable(model):
    from tests.e2e.http.server_process import http_server

    with http_server(model.url, "--max-body-bytes", "1000") as server:
        client = AcpHttp(server.url)
        big = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x" * 2000}}
        response = client.post(big)
        assert response.status_code == 413 and "1000" in response.json()["error"]
        chunked = client.http.post(
            server.url,
            content=iter([b'{"jsonrpc":"2.0","method":"x","params":"', b"y" * 2000, b'"}']),
            headers={"Acp-Connection-Id": client.connection_id, "Content-Type": "application/json"},
        )
        assert chunked.status_code == 413
        client.close()


def test_foreign_origin_is_refused(live):
    with httpx.Client(timeout=10) as http:
        assert http.post(live.url, json=INIT, headers={"Origin": "https://evil.example"}).status_code == 403
        assert http.get(f"{live.base}/health", headers={"Origin": "http://attacker.test:8765"}).status_code == 403
        assert http.post(live.url, json=INIT, headers={"Origin": "http://localhost:3000"}).status_code == 200
        assert http.post(live.url, json=INIT, headers={"Origin": "http://127.0.0.1"}).status_code == 200


def test_rebound_host_name_is_refused_by_a_loopback_server(live):
    # A page on attacker.test rebinds its name to 127.0.0.1: same-origin GETs carry no Origin, only Host.
    with httpx.Client(timeout=10) as http:
        assert http.get(f"{live.base}/health", headers={"Host": "attacker.test:8765"}).status_code == 403
        assert http.post(live.url, json=INIT, headers={"Host": "attacker.test:8765"}).status_code == 403
        assert http.get(f"{live.base}/health", headers={"Host": "localhost:8765"}).status_code == 200
