"""While a warm child serves, the agent's own secrets are in no iac-code process's environment block: not the
launcher's (issue 36: it kept the keys and the HTTP token there, readable by every command as
/proc/<pid>/environ), not the warm process's, not the child's. The child still has them: its model calls carry
the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import answer_text, model_env
from tests.e2e.warm.runtime import child_pid, served_by
from tests.fakes.openai_server import ScriptedOpenAI

SECRETS = {
    "IAC_CODE_API_KEY": "sk-warm-test-key-5e4d3c2b",
    "OPENAI_API_KEY": "sk-warm-test-openai-9a8b7c",
    "ANTHROPIC_API_KEY": "sk-warm-test-anthropic-6f5e4d",
    "IACCODE_ACP_HTTP_TOKEN": "warm-test-http-token-3c2b1a",
}


class KeyRecordingOpenAI(ScriptedOpenAI):
    """The scripted model, also recording each request's Authorization header."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.authorizations: list[str | None] = []

    def handle_post(self, handler: Any, body: dict[str, Any]) -> None:
        self.authorizations.append(handler.headers.get("Authorization"))
        super().handle_post(handler, body)


def secrets_in_environment_block(pid: int) -> list[str]:
    block = Path(f"/proc/{pid}/environ").read_bytes()
    return [name for name, value in SECRETS.items() if value.encode() in block]


def test_no_process_keeps_the_secrets_in_its_environment_while_the_child_serves_with_them(runtime, tmp_path, workspace):
    with KeyRecordingOpenAI(default={"text": "ok"}) as model:
        env = model_env(model.url, tmp_path / "config", **SECRETS)
        warm_pid = int(runtime.start(env).with_suffix(".lock").read_text())
        agent = runtime.launch(env)
        agent.initialize()
        child = child_pid(agent)
        assert answer_text(agent.prompt(agent.new_session(workspace), "hi")[1]) == "ok"

        for pid in (agent.proc.pid, warm_pid, child):
            assert secrets_in_environment_block(pid) == [], f"pid {pid}"
        assert set(model.authorizations) == {f"Bearer {SECRETS['IAC_CODE_API_KEY']}"}
        assert agent.close() == 0
        assert served_by(agent) == child
