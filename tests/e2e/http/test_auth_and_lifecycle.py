"""Bearer token, bind refusal, idle reaping and SIGTERM, each against its own real server process."""

from __future__ import annotations

import signal
import subprocess
import time

import httpx
from tests.e2e.http.client import INIT, AcpHttp
from tests.e2e.http.server_process import IAC_CODE, http_server

TOKEN = "s3cret-token-for-tests"


def test_token_absent_wrong_and_right(model):
    with http_server(model.url, env={"IACCODE_ACP_HTTP_TOKEN": TOKEN}) as server:
        with httpx.Client(timeout=10) as http:
            health = f"{server.base}/health"
            assert http.get(health).status_code == 401
            assert http.get(health, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get(health, headers={"Authorization": TOKEN}).status_code == 401
            assert http.post(server.url, json=INIT).status_code == 401
            assert http.post(server.url, json=INIT, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get(health, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200

        client = AcpHttp(server.url, headers={"Authorization": f"Bearer {TOKEN}"})
        stream = client.stream()
        assert stream.status == 200
        client.new_session(stream, str(server.workspace))
        with httpx.Client(timeout=10) as http:
            no_token = http.get(server.url, headers={"Acp-Connection-Id": client.connection_id})
            assert no_token.status_code == 401
        stream.close()
        client.close()
        assert TOKEN not in server.log_text()


def test_non_loopback_bind_without_token_is_refused(tmp_path):
    result = subprocess.run(
        [str(IAC_CODE), "acp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
        env={"IAC_CODE_CONFIG_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "IACCODE_ACP_HTTP_TOKEN" in result.stderr and "--allow-insecure-bind" in result.stderr


def test_the_token_under_the_projects_prefix_protects_the_server_too(model):
    with http_server(model.url, env={"IAC_CODE_ACP_HTTP_TOKEN": TOKEN}) as server:
        with httpx.Client(timeout=10) as http:
            health = f"{server.base}/health"
            assert http.get(health).status_code == 401
            assert http.get(health, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert "no auth" not in server.log_text()


def test_idle_connection_is_reaped_but_one_with_a_stream_is_kept(model):
    with http_server(model.url, "--idle-timeout", "0.5") as server:
        idle, watched = AcpHttp(server.url), AcpHttp(server.url)
        stream = watched.stream()
        time.sleep(1.5)
        assert (
            idle.post({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}).status_code == 400
        )
        watched.new_session(stream, str(server.workspace))
        assert "idle for more than 0.5s" in server.log_text()
        stream.close()


def test_sigterm_with_open_streams_and_a_running_turn_exits_within_5s(model):
    model.add({"text": "thinking", "hang": True})
    with http_server(model.url) as server:
        client = AcpHttp(server.url)
        stream = client.stream()
        session_id = client.new_session(stream, str(server.workspace))
        asked = len(model.requests)
        client.prompt(session_id, "take your time")
        _wait_until(lambda: len(model.requests) > asked)
        other_streams = [AcpHttp(server.url).stream() for _ in range(3)]

        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        code = server.process.wait(10)
        elapsed = time.monotonic() - started
        assert elapsed < 5, server.log_text()
        assert code == 0
        while "eof" not in stream.next(timeout=5):  # the stream ends (after what was queued)
            pass
        for other in [stream, *other_streams]:
            other.close()


def _wait_until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)
