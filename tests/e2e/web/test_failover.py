"""Two instances on one PostgreSQL behind nginx (tests/e2e/cluster): the page goes on when the instance that
hosts its connection is killed (-9). Over WebSocket the socket ends with it: the page initializes again
through the balancer and loads its session there. Over HTTP+SSE the other instance adopts the connection,
without the session: the next prompt is answered "Session not found", so the page loads it and sends again."""

from __future__ import annotations

import pytest
from tests.e2e.cluster.conftest import cluster
from tests.e2e.web.page import WebPage

OPENED = "opened by local"  # an instance's log line for a connection it hosts


@pytest.mark.parametrize("transport", [None, "sse"], ids=["websocket", "sse"])
def test_the_page_goes_on_after_its_instance_dies(nginx_available, browser, model, pg_url, transport):
    model.add({"text": "before the failover"}, {"text": "after the failover"})
    with cluster(model.url, pg_url) as running:
        web = WebPage(browser, running.base)
        web.open(f"?transport={transport}" if transport else "")
        assert web.connected() == (transport or "websocket")
        session_id = web.new_session(str(running.workspace))
        web.send("one")
        assert web.wait_turns(1) == ["end_turn"]

        (host,) = [name for name, server in running.instances.items() if OPENED in server.log_text()]
        (survivor,) = set(running.instances) - {host}
        running.instances[host].process.kill()
        # The page's connection moves: a new one (WebSocket) or the old one adopted (SSE) on the survivor.
        web.until(lambda: OPENED in running.instances[survivor].log_text(), "the connection did not move", 30)
        web.connected()
        web.until(lambda: web.texts("agent-message") == ["before the failover"], "history lost")
        web.send("two")  # over SSE the adopting instance has no session yet: the page loads it, then sends
        web.until(lambda: web.texts("agent-message")[-1:] == ["after the failover"], "no answer after the failover")
        assert web.stop_reasons()[-1] == "end_turn" and not web.all(".notice")
        assert web.texts("agent-message")[-1] == "after the failover"
        assert web.session_id() == session_id
