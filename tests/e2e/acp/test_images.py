"""Images over stdio: advertised when enabled, sent to the model as data URLs, kept in the history, refused when too big."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents
from tests.e2e.sessions.flows import stored_messages

from iac_code.image_data import MAX_IMAGE_DATA_CHARS

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
DATA_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}


@pytest.fixture(scope="module")
def with_images(model, tmp_path_factory) -> Iterator[tuple[AgentProcess, Path]]:
    """An agent whose model takes images (IAC_CODE_IMAGES=1), and its config directory."""
    config = tmp_path_factory.mktemp("config")
    agents = Agents(model.url, config)
    yield agents.start(IAC_CODE_IMAGES="1"), config
    agents.close_all()


def user_contents(request: dict) -> list:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_an_image_prompt_reaches_the_model_as_a_data_url(with_images, model, workspace):
    agent, config = with_images
    capabilities = agent.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})["agentCapabilities"]
    assert capabilities["promptCapabilities"]["image"] is True
    model.add({"text": "The plan failed on the NAT gateway."}, {"text": "Yes, that one."})
    session_id = agent.new_session(workspace)
    blocks = [{"type": "text", "text": "Why did this fail?"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    response, _ = agent.prompt(session_id, blocks)
    assert response["result"]["stopReason"] == "end_turn"
    assert user_contents(model.requests[-1]) == [[DATA_URL, {"type": "text", "text": "Why did this fail?"}]]

    # The image stays in the conversation: the next turn still shows it to the model, and it is on disk.
    agent.prompt(session_id, "And the fix?")
    assert user_contents(model.requests[-1])[0] == [DATA_URL, {"type": "text", "text": "Why did this fail?"}]
    assert stored_messages(config, session_id)[0]["images"] == [{"mime_type": "image/png", "data": PNG}]


def test_an_image_over_the_limit_is_refused_and_the_session_goes_on(with_images, model, workspace):
    agent, _ = with_images
    session_id = agent.new_session(workspace)
    huge = base64.b64encode(b"\x89PNG\r\n\x1a\n\0\0\0\0").decode() + "A" * MAX_IMAGE_DATA_CHARS
    blocks = [{"type": "text", "text": "look"}, {"type": "image", "data": huge, "mimeType": "image/png"}]
    response, _ = agent.prompt(session_id, blocks)
    assert response["error"]["code"] == -32602
    assert "limit is 5 MiB" in response["error"]["data"]["prompt[1]"]
    assert model.requests == []
    model.add({"text": "fine"})
    response, _ = agent.prompt(session_id, "text only then")
    assert response["result"]["stopReason"] == "end_turn"


def test_a_text_only_model_gets_a_marker(agent, model, workspace):
    model.add({"text": "ok"})
    session_id = agent.new_session(workspace)
    agent.prompt(session_id, [{"type": "image", "data": PNG, "mimeType": "image/png"}])
    assert user_contents(model.requests[-1]) == ["[image: image/png]"]
