"""A tiny ACP agent on the official SDK, to exercise the HTTP transport without a model.

Prompt texts drive it: "count N" streams N chunks, "ask" requests a permission and reports the
outcome, "big N" sends one N-byte chunk, "wait" runs until cancelled; anything else is echoed.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from acp import PROTOCOL_VERSION
from acp.agent.connection import AgentSideConnection
from acp.helpers import update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)


class FakeAgent:
    def __init__(self, conn: AgentSideConnection) -> None:
        self._conn = conn
        self.cancelled: set[str] = set()

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(load_session=True)
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid.uuid4().hex)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        await self._say(session_id, f"history of {session_id}")
        return LoadSessionResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = prompt[0].text
        command, _, argument = text.partition(" ")
        if command == "count":
            for index in range(int(argument)):
                await self._say(session_id, f"chunk {index}")
        elif command == "big":
            await self._say(session_id, "x" * int(argument))
        elif command == "ask":
            answer = await self._conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="call-1", title="write a.tf"),
                options=[
                    PermissionOption(option_id="allow-once", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
                ],
            )
            outcome = answer.outcome
            await self._say(session_id, f"outcome {getattr(outcome, 'option_id', outcome.outcome)}")
        elif command == "wait":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return PromptResponse(stop_reason="cancelled")
        else:
            await self._say(session_id, f"echo {text}")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.add(session_id)

    async def _say(self, session_id: str, text: str) -> None:
        await self._conn.session_update(session_id=session_id, update=update_agent_message_text(text))


async def serve_fake(transport: Any) -> None:
    conn = AgentSideConnection(FakeAgent, transport, listening=False, use_unstable_protocol=True)
    async with conn:
        await conn.listen()
