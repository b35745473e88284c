"""Who is asking, on two instances behind nginx on PostgreSQL: whichever instance a request lands on, B
cannot list, load, prompt or stream A's sessions, nor use A's connection id; an admin can see them."""

from __future__ import annotations

from tests.e2e.cluster.conftest import cluster
from tests.e2e.http.test_principals import (
    NOT_FOUND,
    Client,
    alice_and_bob,
    assert_foreign_connection_refused,
    three_principals,
)


def test_two_principals_on_two_instances(nginx_available, model, pg_module_url, tmp_path):
    tokens_file = tmp_path / "tokens.json"
    token = three_principals(tokens_file)
    with cluster(model.url, pg_module_url, env={"IAC_CODE_TOKENS_FILE": str(tokens_file)}) as two:
        cwd = str(two.workspace)
        alice, bob, theirs, mine = alice_and_bob(two.url, token, cwd, model)

        for _ in two.instances:  # round robin: each request below lands on the next instance
            assert bob.listed() == {mine}
            load = {"sessionId": theirs, "cwd": cwd, "mcpServers": []}
            assert bob.request("session/load", load)["error"] == NOT_FOUND
            prompt = {"sessionId": theirs, "prompt": [{"type": "text", "text": "tell me"}]}
            assert bob.request("session/prompt", prompt)["error"] == NOT_FOUND

        for server in two.instances.values():  # on its host and on the other instance alike
            assert_foreign_connection_refused(server.url, token["bob"], alice.acp.connection_id, theirs)
        assert alice.listed() == {theirs}  # A's connection and stream go on

        root = Client(two.url, token["root"])
        assert root.listed() == {theirs, mine}
        loaded = root.request("session/load", {"sessionId": theirs, "cwd": cwd, "mcpServers": []})
        assert "error" not in loaded
        for client in (alice, bob, root):
            client.close()
