"""A client that answers `elicitation/create` (tests/e2e/acp/wire.py does the wire): an agent initialized with
the capabilities a test gives, a prompt whose questions a callback answers, and what the model got back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.acp.wire import AgentProcess, Message, model_env

FORM_CLIENT = {"elicitation": {"form": {}}}


def started_agent(model, config_dir: Path, capabilities: dict[str, Any]) -> AgentProcess:
    """`iac-code acp` talking to the scripted `model`, initialized with `capabilities`."""
    agent = AgentProcess(model_env(model.url, config_dir))
    agent.result("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    return agent


def prompt_answering(
    agent: AgentProcess, session_id: str, answer: Callable[[Message], Any], timeout: float = 15
) -> tuple[Message, list[Message], list[Message]]:
    """Run a prompt, answering each `elicitation/create` with `answer(request)`: (response, the other
    messages, the elicitation requests)."""
    prompt = [{"type": "text", "text": "go"}]
    prompt_id = agent.start_request("session/prompt", {"sessionId": session_id, "prompt": prompt})
    seen: list[Message] = []
    asked: list[Message] = []
    while True:
        message = agent.next(timeout)
        if message.get("method") == "elicitation/create":
            asked.append(message)
            agent.answer(message, answer(message))
        elif message.get("id") == prompt_id and "method" not in message:
            return message, seen, asked
        else:
            seen.append(message)


def tool_result_sent(model) -> str:
    """What the model's last request carried as the one tool call's result."""
    (result,) = [m for m in model.requests[-1]["messages"] if m.get("role") == "tool"]
    return str(result["content"])
