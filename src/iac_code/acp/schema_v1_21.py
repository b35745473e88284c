"""What ACP's stable schema gained in v1.20 and v1.21 that the SDK we pin (0.12, schema v1.19) does not model.

Written from the official schema (`schema/v1/schema.json` of the npm package `@agentclientprotocol/sdk` 2.4.0;
tests/acp_schema.py checks every message the agent sends against it). The SDK already carries the rest of
v1.21 (`$/cancel_request`, `additionalDirectories`, `messageId`, elicitation, boolean config options, logout),
some of it marked unstable: those names are imported from `acp.schema` as usual. When the SDK speaks v1.21,
this module is what gets deleted.

- Client capabilities `session.notices` and `session.compaction` (the SDK's model drops them).
- The session updates `notice`, `compaction_update` and `compaction_summary_chunk`.
- `name` (the tool's programmatic name) on `tool_call` and `tool_call_update`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from acp import schema
from pydantic import BaseModel, ConfigDict, Field

_MODEL = ConfigDict(populate_by_name=True)
Meta = Annotated[dict[str, Any] | None, Field(alias="_meta")]


class ClientSessionCapabilities(schema.ClientSessionCapabilities):
    """`clientCapabilities.session`: `{}` for `notices`/`compaction` advertises the whole contract."""

    compaction: dict[str, Any] | None = None
    notices: dict[str, Any] | None = None


class ClientCapabilities(schema.ClientCapabilities):
    session: ClientSessionCapabilities | None = None


NoticeSeverity = Literal["info", "warning", "error"]


class NoticeUpdate(BaseModel):
    """Information for the user that is not part of the session's history (fire and forget). Only to a client
    that advertised `session.notices`."""

    model_config = _MODEL
    session_update: Annotated[Literal["notice"], Field(alias="sessionUpdate")] = "notice"
    severity: NoticeSeverity
    title: Annotated[str, Field(min_length=1)]
    description: str | None = None
    field_meta: Meta = None


ContentBlock = Annotated[
    schema.TextContentBlock
    | schema.ImageContentBlock
    | schema.AudioContentBlock
    | schema.ResourceContentBlock
    | schema.EmbeddedResourceContentBlock,
    Field(discriminator="type"),
]

CompactionStatus = Literal["in_progress", "completed", "failed", "cancelled"]


class CompactionUpdate(BaseModel):
    """A compaction of the conversation, created by its first update and patched by later ones with the same id.
    Only to a client that advertised `session.compaction`."""

    model_config = _MODEL
    session_update: Annotated[Literal["compaction_update"], Field(alias="sessionUpdate")] = "compaction_update"
    compaction_id: Annotated[str, Field(alias="compactionId")]
    status: CompactionStatus
    summary: list[ContentBlock] | None = None
    error: str | None = None
    field_meta: Meta = None


class CompactionSummaryChunk(BaseModel):
    """One content block appended to a compaction's summary."""

    model_config = _MODEL
    session_update: Annotated[Literal["compaction_summary_chunk"], Field(alias="sessionUpdate")] = (
        "compaction_summary_chunk"
    )
    compaction_id: Annotated[str, Field(alias="compactionId")]
    content: ContentBlock
    field_meta: Meta = None


class ToolCallStart(schema.ToolCallStart):
    name: str | None = None  # the tool's programmatic name (`write_file`, `mcp__github__create_issue`)


class ToolCallProgress(schema.ToolCallProgress):
    name: str | None = None


# Every `session/update` the agent sends (the SDK's SessionNotification.update, which it does not name).
SessionUpdate = (
    schema.UserMessageChunk
    | schema.AgentMessageChunk
    | schema.AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | schema.AgentPlanUpdate
    | schema.AvailableCommandsUpdate
    | schema.CurrentModeUpdate
    | schema.ConfigOptionUpdate
    | schema.SessionInfoUpdate
    | schema.UsageUpdate
    | NoticeUpdate
    | CompactionUpdate
    | CompactionSummaryChunk
)


class SessionNotification(BaseModel):
    """`session/update` params, with the v1.21 updates."""

    model_config = _MODEL
    session_id: Annotated[str, Field(alias="sessionId")]
    update: Annotated[SessionUpdate, Field(discriminator="session_update")]
    field_meta: Meta = None
