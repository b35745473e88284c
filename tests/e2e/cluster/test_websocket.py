"""WebSockets on two instances sharing PostgreSQL: a socket held by one instance drives a connection hosted
by the other, and a socket through nginx opens and drives its own connection."""

from __future__ import annotations

from tests.e2e.http.client import AcpHttp, is_response
from tests.e2e.http.ws_client import acp_socket, is_method, text_of


async def test_a_socket_on_b_attached_to_a_connection_hosted_on_a(two, model):
    host, holder = two.instances["i1"], two.instances["i2"]
    client = AcpHttp(host.url)  # initialize by POST on A: A runs the agent
    assert client.initialize_headers["Iac-Instance-Id"] == "i1"
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "attached.tf", "content": "# B\n"}}]},
        {"text": "written from A, streamed by B"},
    )
    async with acp_socket(holder.url, headers={"Acp-Connection-Id": client.connection_id}, initialize=False) as socket:
        assert socket.headers["Iac-Instance-Id"] == "i2" and socket.connection_id == client.connection_id
        session_id = await socket.new_session(str(two.workspace))
        await socket.prompt(session_id, "write attached.tf")
        asked = (await socket.until(is_method("session/request_permission")))[-1]
        await socket.answer_permission(asked, "allow_once")
        rest = await socket.until(is_response(3))
    assert rest[-1]["result"]["stopReason"] == "end_turn"
    assert (two.workspace / "attached.tf").read_text() == "# B\n"
    assert text_of(rest) == "written from A, streamed by B"
    # The attached socket's end only detached it: the connection goes on, and its stream too.
    stream = client.stream()
    assert client.new_session(stream, str(two.workspace), request_id=4)
    stream.close()
    client.close()


async def test_a_socket_through_the_balancer_opens_and_drives_its_connection(two, model):
    model.add({"text": "over nginx"})
    async with acp_socket(two.url) as socket:
        assert socket.headers["Iac-Instance-Id"] in two.instances
        session_id = await socket.new_session(str(two.workspace))
        await socket.prompt(session_id, "hello")
        messages = await socket.until(is_response(3))
    assert messages[-1]["result"]["stopReason"] == "end_turn"
    assert text_of(messages) == "over nginx"
