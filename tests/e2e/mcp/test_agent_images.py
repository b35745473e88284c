"""Images from MCP tools and prompts, through the real agent: in the model's request when the model reads images (the
OpenAI and Anthropic shapes), a marker otherwise, kept in the session so a session/load in a new process
still shows them to the model; and the replay titles MCP calls as they were titled live."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from tests.e2e.acp.wire import Agents
from tests.e2e.mcp.servers import acp_form, fixture_server
from tests.e2e.mcp.through_agent import allow, call, open_session, tool_updates
from tests.e2e.sessions.flows import replayed
from tests.fakes.anthropic_server import ScriptedAnthropic
from tests.fakes.mcp_server import PIXEL_PNG

pytestmark = pytest.mark.timeout(180)

PIXEL = base64.b64encode(PIXEL_PNG).decode()
DATA_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
MARKER = "[image: image/png (not shown: this model does not read images)]"
LIVE_TITLES = ["Describe a region (MCP server fixture)", "diagram (MCP server fixture)"]


@pytest.fixture
def fixture():
    return acp_form(fixture_server())


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as server:
        yield server


def _draw(agent, model, workspace, fixture) -> tuple[str, list]:
    """A session whose turn calls describe_region (titled by the server) then diagram (an image)."""
    session_id, _ = open_session(agent, workspace, [fixture], ready=["fixture"])
    model.add(
        call("mcp__fixture__describe_region", region="cn-hangzhou"), call("mcp__fixture__diagram"), {"text": "a pixel"}
    )
    response, seen = agent.prompt(session_id, "draw the architecture", allow())
    assert response["result"]["stopReason"] == "end_turn"
    return session_id, seen


def test_openai_gets_the_image_after_the_tool_messages_and_again_after_a_load(spawn, model, workspace, fixture):
    first = spawn(IAC_CODE_IMAGES="1")
    session_id, seen = _draw(first, model, workspace, fixture)
    messages = model.requests[-1]["messages"]
    assert [m["role"] for m in messages[-3:]] == ["assistant", "tool", "user"]
    assert messages[-2] == {"role": "tool", "tool_call_id": messages[-2]["tool_call_id"], "content": "The diagram:"}
    intro, image = messages[-1]["content"]
    assert intro["type"] == "text" and "(mcp__fixture__diagram) returned an image" in intro["text"]
    assert image == DATA_URL
    live = [(u["title"], u["kind"]) for u in tool_updates(seen) if u["sessionUpdate"] == "tool_call"]
    assert [title for title, _ in live] == LIVE_TITLES
    first.close()

    # A new process loads the session: the replay (its servers still starting) titles the calls and gives their kinds as live and
    # shows the image; the next turn sends the stored image to the model again.
    second = spawn(IAC_CODE_IMAGES="1")
    load = second.start_request(
        "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": [fixture]}
    )
    response, before = second.response(load)
    assert "result" in response, response
    shown = replayed(before, session_id)
    assert [(u["title"], u["kind"]) for u in shown if u["sessionUpdate"] == "tool_call"] == live
    (diagram,) = [u for u in shown if u["sessionUpdate"] == "tool_call_update" and len(u.get("content", [])) == 2]
    assert diagram["content"][1]["content"] == {"type": "image", "mimeType": "image/png", "data": PIXEL}
    model.add({"text": "still a pixel"})
    second.prompt(session_id, "and now?")
    assert DATA_URL in [part for m in model.requests[-1]["messages"] if m["role"] == "user" for part in m["content"]]


@pytest.mark.parametrize(
    "env",
    [{}, {"IAC_CODE_MODEL": "gpt-4o", "IAC_CODE_IMAGES": "0"}],
    ids=["text-only-model", "images-setting-off"],
)
def test_a_model_without_images_gets_a_marker(spawn, model, workspace, fixture, env):
    agent = spawn(**env)
    _draw(agent, model, workspace, fixture)
    messages = model.requests[-1]["messages"]
    assert messages[-1] == {
        "role": "tool",
        "tool_call_id": messages[-1]["tool_call_id"],
        "content": f"The diagram:\n{MARKER}",
    }
    assert "image_url" not in str(messages)


def test_anthropic_gets_the_image_inside_the_tool_result(anthropic, workspace, fixture, tmp_path):
    agents = Agents(anthropic.url, tmp_path / "config")
    try:
        agent = agents.start(IAC_CODE_PROVIDER="anthropic_compatible", IAC_CODE_MODEL="claude-scripted")
        _draw(agent, anthropic, workspace, fixture)
    finally:
        agents.close_all()
    results = anthropic.requests[-1]["messages"][-1]["content"]
    diagram = next(block for block in results if block["type"] == "tool_result" and isinstance(block["content"], list))
    assert diagram["content"] == [
        {"type": "text", "text": "The diagram:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]


def test_an_mcp_prompt_with_an_image_sends_it_with_the_rendered_text(spawn, model, workspace, fixture):
    agent = spawn(IAC_CODE_MODEL="gpt-4o")
    session_id, _ = open_session(agent, workspace, [fixture], ready=["fixture"])
    model.add({"text": "a pixel"})
    response, _ = agent.prompt(session_id, "/mcp__fixture__explain_diagram")
    assert response["result"]["stopReason"] == "end_turn"
    (user,) = [m for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert user["content"] == [DATA_URL, {"type": "text", "text": "Explain this diagram."}]
