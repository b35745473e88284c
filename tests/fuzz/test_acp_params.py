"""Arbitrary and ill-typed params for every ACP method, sent to one real `iac-code acp` over stdio.

Properties: every request gets exactly one answer; an error is -32602 (invalid params) whenever the
params are an object, an array or absent, and -32600 when they are a scalar (not a params value at
all); never -32603, which means the agent broke. A notification never gets an answer. After each
input the same process still serves a normal request.

Values are drawn around valid ones, so that examples go deep: `$SESSION` becomes a session created
for that example, `$CWD` the workspace. Lone surrogates are left to the decoder's own fuzz tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.e2e.acp.wire import AgentProcess, model_env
from tests.fakes.openai_server import ScriptedOpenAI

EXAMPLES = 60  # per method: 13 methods x 60 examples x 2-3 round trips take about ten seconds
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a real process: latency varies with the machine's load
    derandomize=True,  # the same inputs on every run: CI fails on bugs, not on luck
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MODES = ["default", "accept-edits", "read-only", "plan", "bypass-permissions"]

text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
session_ids = st.sampled_from(["$SESSION", "sess_" + "0" * 32, "", "../../etc", "a" * 300]) | json_values
cwds = st.sampled_from(["$CWD", "/", "relative/path", "/no/such/dir", "/" + "a" * 5000, "/\x00"]) | json_values
mcp_servers = st.just([]) | st.lists(st.dictionaries(text, json_values, max_size=4), max_size=2) | json_values
content_blocks = (
    st.fixed_dictionaries({"type": st.just("text"), "text": text})
    | st.fixed_dictionaries({"type": st.just("resource_link"), "uri": text | json_values, "name": text})
    | st.fixed_dictionaries(
        {"type": st.just("resource"), "resource": st.fixed_dictionaries({"uri": text, "text": text}) | json_values}
    )
    | st.fixed_dictionaries({"type": st.just("image"), "data": text | json_values, "mimeType": text})
    | json_values
)


def params_of(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Objects with each field valid, ill-typed or missing, plus stray keys; or any value at all."""
    optional = {name: strategy | json_values for name, strategy in fields.items()}
    objects = st.fixed_dictionaries({}, optional=optional)
    with_extras = st.builds(lambda base, extra: {**extra, **base}, objects, st.dictionaries(text, json_values))
    return objects | with_extras | json_values


METHODS: dict[str, st.SearchStrategy[Any]] = {
    "initialize": params_of(
        {
            "protocolVersion": st.integers() | st.just(1),
            "clientCapabilities": st.just({}) | st.fixed_dictionaries({"fs": json_values}),
            "clientInfo": st.fixed_dictionaries({"name": text, "version": text}),
        }
    ),
    "session/new": params_of({"cwd": cwds, "mcpServers": mcp_servers}),
    "session/load": params_of({"sessionId": session_ids, "cwd": cwds, "mcpServers": mcp_servers}),
    "session/resume": params_of({"sessionId": session_ids, "cwd": cwds, "mcpServers": mcp_servers}),
    "session/fork": params_of({"sessionId": session_ids, "cwd": cwds, "mcpServers": mcp_servers}),
    "session/prompt": params_of({"sessionId": session_ids, "prompt": st.lists(content_blocks, max_size=3)}),
    "session/close": params_of({"sessionId": session_ids}),
    "session/list": params_of({"cwd": cwds, "cursor": text}),
    "session/set_mode": params_of({"sessionId": session_ids, "modeId": st.sampled_from(MODES) | text}),
    "session/set_config_option": params_of(
        {
            "sessionId": session_ids,
            "configId": st.sampled_from(["mode", "model"]) | text,
            "value": st.sampled_from([*MODES, "scripted-model"]) | text,
        }
    ),
    "session/set_model": params_of({"sessionId": session_ids, "modelId": st.just("scripted-model") | text}),
    "session/delete": params_of({"sessionId": session_ids}),
}
ABSENT = object()  # a request without "params"


@dataclass
class Target:
    agent: AgentProcess
    workspace: Path
    ids: Iterator[int] = field(default_factory=itertools.count)

    def resolve(self, value: Any, session: list[str]) -> Any:
        """The placeholders replaced: one fresh session per example, however many times it is named."""
        if value == "$CWD":
            return str(self.workspace)
        if value == "$SESSION":
            if not session:
                session.append(self.agent.new_session(self.workspace))
            return session[0]
        if isinstance(value, dict):
            return {key: self.resolve(item, session) for key, item in value.items()}
        if isinstance(value, list):
            return [self.resolve(item, session) for item in value]
        return value

    def send(self, method: str, params: Any, *, notification: bool = False) -> str | None:
        """Send as drawn: params left out when ABSENT, an explicit null when None."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not ABSENT:
            message["params"] = self.resolve(params, [])
        request_id = None if notification else f"fuzz-{next(self.ids)}"
        if request_id is not None:
            message["id"] = request_id
        self.agent.send(message)
        return request_id

    def still_serving(self) -> list[dict[str, Any]]:
        """Answers a normal request; returns what arrived before its answer."""
        response, before = self.agent.response(self.agent.start_request("session/list", {}))
        assert isinstance(response["result"]["sessions"], list), response
        return before


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> Iterator[Target]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "work").mkdir()
    with ScriptedOpenAI(default={"text": "ok"}) as model:
        agent = AgentProcess(model_env(model.url, root / "config"))
        agent.initialize()
        yield Target(agent, root / "work")
        code = agent.close()
    stderr = "".join(agent.stderr_lines)
    assert code == 0, stderr
    assert not agent.stdout_problems, agent.stdout_problems
    assert "Traceback" not in stderr, stderr


def is_object_params(params: Any) -> bool:
    return params is ABSENT or isinstance(params, (dict, list))


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_answers_any_params_with_the_right_code(target, method):
    @FUZZ
    @given(params=METHODS[method] | st.just(ABSENT))
    def check(params: Any) -> None:
        response, _ = target.agent.response(target.send(method, params))
        if "error" in response:
            expected = -32602 if is_object_params(params) else -32600
            assert response["error"]["code"] == expected, (params, response)
        target.still_serving()

    check()


@FUZZ
@given(params=params_of({"sessionId": session_ids}) | st.just(ABSENT))
def test_cancel_is_a_notification_and_never_answered(target, params):
    target.send("session/cancel", params, notification=True)
    answers = [m for m in target.still_serving() if "method" not in m]
    if is_object_params(params):
        assert answers == []
    else:  # not a JSON-RPC message at all: the transport says so, with a null id
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32600)]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/new", {"cwd": "/" + "a" * 5000, "mcpServers": []}),  # ENAMETOOLONG from is_dir(): was -32603
        ("session/load", {"sessionId": "$SESSION", "cwd": "/" + "a/" * 3000, "mcpServers": []}),
        ("session/fork", {"sessionId": "$SESSION", "cwd": "/" + "b" * 300}),
    ],
)
def test_inputs_the_fuzzer_found(target, method, params):
    response, _ = target.agent.response(target.send(method, params))
    assert response["error"]["code"] == -32602 and "cwd" in response["error"]["data"], response
    target.still_serving()
