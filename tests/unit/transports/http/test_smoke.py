from tests.unit.transports.http.conftest import initialize, is_response, new_session, open_stream, post, prompt


async def test_walkthrough(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as events:
        assert (await post(client, server.url, conn_id, new_session())).status_code == 202
        created = (await events.until(is_response(2)))[-1]["data"]
        session_id = created["result"]["sessionId"]
        assert (await post(client, server.url, conn_id, prompt(session_id, "count 3"))).status_code == 202
        seen = await events.until(is_response(3))
    texts = [e["data"]["params"]["update"]["content"]["text"] for e in seen if "method" in e["data"]]
    assert texts == ["chunk 0", "chunk 1", "chunk 2"]
    assert seen[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert (await client.delete(f"{server.url}/acp", headers={"Acp-Connection-Id": conn_id})).status_code == 200
