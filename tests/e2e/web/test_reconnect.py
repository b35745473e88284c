"""The page keeps working when the network or the server goes away: a dropped SSE stream is resumed with
Last-Event-ID (nothing lost, nothing twice), and after a server restart the page initializes again and loads
its session (history replayed), on each transport."""

from __future__ import annotations

import socket

import pytest
from tests.e2e.http.server_process import http_server
from tests.e2e.web.page import WebPage
from tests.e2e.web.proxy import cutting_proxy

STREAMED = "".join(f"word{n} " for n in range(60)).strip()


def test_a_dropped_stream_is_resumed_where_it_stopped(page, model, live):
    with cutting_proxy(int(live.base.rsplit(":", 1)[1])) as proxy:
        web = WebPage(page.driver, proxy.base)
        web.open("?transport=sse")
        web.new_session()
        model.add({"text": STREAMED, "chunk_chars": 6, "delay": 0.03})
        web.send("stream slowly")
        web.until(lambda: len(" ".join(web.texts("agent-message"))) > 30, "nothing streamed")
        proxy.cut()
        assert web.wait_turns(1) == ["end_turn"]
        assert web.texts("agent-message") == [STREAMED]
    resumed = [head for head in proxy.request_heads if head.startswith("GET /acp") and "last-event-id" in head.lower()]
    assert resumed, proxy.request_heads


@pytest.mark.parametrize("transport", [None, "sse"], ids=["default", "sse"])
def test_after_a_server_restart_the_page_loads_its_session_again(page, model, tmp_path, transport):
    port, config, work = free_port(), tmp_path / "config", tmp_path / "work"
    work.mkdir()
    settings = {"IAC_CODE_CONFIG_DIR": str(config)}  # the sessions outlive the process
    model.add({"text": "before the restart"}, {"text": "after the restart"})
    with http_server(model.url, "--port", str(port), env=settings) as first:
        web = WebPage(page.driver, first.base)
        web.open(f"?transport={transport}" if transport else "")
        session_id = web.new_session(str(work))
        web.send("one")
        web.wait_turns(1)
    web.until(lambda: web.one("#connection-status").get_attribute("data-state") != "connected", "no loss noticed")
    with http_server(model.url, "--port", str(port), env=settings) as second:
        web.base = second.base
        web.connected()
        web.until(lambda: web.texts("agent-message") == ["before the restart"], "history not replayed")
        assert web.session_id() == session_id
        web.send("two")
        assert web.wait_turns(1) == ["end_turn"]  # the replay shows no stop reason; this turn's
        assert web.texts("user-message") == ["one", "two"]
        assert web.texts("agent-message")[-1] == "after the restart"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
