"""The conversation vocabulary shared by providers, the agent loop and the session store.

A history is a list of `Message`s in the order the model saw them. Each provider translates it to
its own wire format; the store writes each message as one JSON line (`to_dict` / `from_dict`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal
from uuid import UUID, uuid4, uuid5

from iac_code.encodable import encodable

Role = Literal["user", "assistant", "tool"]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Image:
    """An image the model reads: one the user attached to a prompt, or one a tool returned; base64 `data`
    checked by image_data.checked_image."""

    mime_type: str  # image/png, image/jpeg, image/gif or image/webp
    data: str


@dataclass(frozen=True)
class Diff:
    path: str  # absolute
    old_text: str | None  # None: the file is new
    new_text: str


@dataclass(frozen=True)
class Location:
    path: str  # absolute
    line: int | None = None  # 1-based


@dataclass(frozen=True)
class Audio:
    mime_type: str
    data: str  # base64


@dataclass(frozen=True)
class Resource:
    """A resource link or an embedded resource, as the MCP server gave it (the block's JSON, by alias)."""

    block: dict[str, Any]


# What a tool's result shows beside its text: an image (which the model may also read), audio, a resource.
Block = Image | Audio | Resource


@dataclass
class Shown:
    """What the client was shown when a tool call finished, beside the result message's text and
    `is_error` (the status): the same record makes the live update and the replayed one.

    `raw_output` None means the text; `diff` is shown instead of the text (unless the call failed);
    `terminal_id` is the client terminal the command ran in (live, the client shows its output; on a
    replay the terminal is gone and the text is shown); `blocks` come after the text. Stored, an image
    block that is one of the message's `images` is written as its index there, not twice.
    """

    raw_output: Any = None
    diff: Diff | None = None
    locations: list[Location] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    terminal_id: str | None = None

    def to_dict(self, images: list[Image]) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.raw_output is not None:
            data["raw_output"] = self.raw_output
        if self.diff is not None:
            data["diff"] = {k: v for k, v in asdict(self.diff).items() if v is not None}
        if self.locations:
            data["locations"] = [{k: v for k, v in asdict(loc).items() if v is not None} for loc in self.locations]
        if self.blocks:
            data["blocks"] = [_block_dict(block, images) for block in self.blocks]
        if self.terminal_id is not None:
            data["terminal_id"] = self.terminal_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], images: list[Image]) -> Shown:
        diff = data.get("diff")
        return cls(
            raw_output=data.get("raw_output"),
            diff=Diff(diff["path"], diff.get("old_text"), diff["new_text"]) if diff else None,
            locations=[Location(loc["path"], loc.get("line")) for loc in data.get("locations", [])],
            blocks=[block for item in data.get("blocks", []) if (block := _block(item, images)) is not None],
            terminal_id=data.get("terminal_id"),
        )


def _block_dict(block: Block, images: list[Image]) -> dict[str, Any]:
    if isinstance(block, Resource):
        return block.block
    if isinstance(block, Image) and block in images:
        return {"type": "image", "image": images.index(block)}
    kind = "image" if isinstance(block, Image) else "audio"
    return {"type": kind, "mime_type": block.mime_type, "data": block.data}


def _block(data: dict[str, Any], images: list[Image]) -> Block | None:
    """A stored block; None for one this version does not know (it is left out, not fatal)."""
    kind = data.get("type")
    if kind == "image":
        index = data.get("image")
        if isinstance(index, int):
            return images[index] if 0 <= index < len(images) else None
        return Image(data["mime_type"], data["data"])
    if kind == "audio":
        return Audio(data["mime_type"], data["data"])
    if kind in ("resource", "resource_link"):
        return Resource(data)
    return None


@dataclass
class Usage:
    """What one model call used, as its provider reported it.

    `input_tokens` counts every prompt token the model read, cached or not (the context meter needs
    the whole); `cache_read_tokens` and `cache_write_tokens` are the parts of it read from, and
    written to, the provider's prompt cache. `thought_tokens` is the part of `output_tokens` spent
    reasoning, when the provider says."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    thought_tokens: int = 0


@dataclass
class Message:
    """One turn of the conversation.

    - `id`: the message's id as the client knows it (ACP's messageId), given by the loop as it appends the
      message; "" in sessions stored before ids were kept (`message_ids` derives theirs from the position).
    - user: `text` (the prompt as the model sees it) and its `images`; `blocks`, the prompt's content blocks
      as the client sent them (JSON by alias, neutral: no protocol's types), which a replay shows again (empty
      for a message no client sent, and in sessions stored before they were kept). `summary` marks a
      compaction summary: it replaces every earlier message in the model's context except the `kept` ones
      just before it. The log stays append-only, so a replay still shows the whole conversation.
    - assistant: `text`, `thinking` (+ `thinking_signature` for Anthropic), `tool_calls`.
    - tool: the result of the call `tool_call_id`; `is_error` for failures and denials; `images` the tool
      returned for the model; `tool_title` and `tool_kind` the call's title and kind as the client saw them (a
      replay shows them when the tool is gone, e.g. an MCP server not connected yet); `shown` the rest of
      what the client saw when the call finished (None in sessions stored before it was kept).
    - `usage` and `model`: on a message a model call wrote (an answer, a compaction summary), what that call
      used and which model made it; a session's tokens and cost are summed from them (agent/spend.py).
    """

    role: Role
    id: str = ""
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thinking: str = ""
    thinking_signature: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str = ""
    tool_name: str = ""
    tool_title: str = ""
    tool_kind: str = ""
    is_error: bool = False
    summary: bool = False
    kept: int = 0  # on a summary: how many messages just before it stay in the model's context
    images: list[Image] = field(default_factory=list)
    shown: Shown | None = None
    usage: Usage | None = None
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        # Drop defaults so a persisted line stays short and readable. Field by field, not asdict(): it
        # deep-copies every value, and this runs for every message the store appends.
        data: dict[str, Any] = {"role": self.role}
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if isinstance(value, Shown):
                data[name] = value.to_dict(self.images)
            elif name == "blocks" and value:
                data[name] = [_prompt_block_dict(block, self.images) for block in value]
            elif isinstance(value, Usage):
                data[name] = {k: v for k, v in asdict(value).items() if v}
            elif value != default:
                data[name] = [asdict(item) for item in value] if isinstance(value, list) else value  # calls, images
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        calls = [ToolCall(**c) for c in data.get("tool_calls", [])]
        images = [Image(**i) for i in data.get("images", [])]
        shown = Shown.from_dict(data["shown"], images) if isinstance(data.get("shown"), dict) else None
        usage = _usage(data["usage"]) if isinstance(data.get("usage"), dict) else None
        blocks = [_prompt_block(block, images) for block in data.get("blocks", []) if isinstance(block, dict)]
        nested = ("tool_calls", "images", "shown", "usage", "blocks")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k not in nested}
        return cls(**known, tool_calls=calls, images=images, shown=shown, usage=usage, blocks=blocks)


def _prompt_block_dict(block: dict[str, Any], images: list[Image]) -> dict[str, Any]:
    """A prompt block as stored: an image the message keeps in `images` by its index there, not twice."""
    if block.get("type") == "image":
        image = Image(block.get("mimeType", ""), block.get("data", ""))
        if image in images:
            rest = {k: v for k, v in block.items() if k not in ("mimeType", "data")}
            return {**rest, "image": images.index(image)}
    return block


def _prompt_block(data: dict[str, Any], images: list[Image]) -> dict[str, Any]:
    index = data.get("image")
    if data.get("type") != "image" or not isinstance(index, int) or not 0 <= index < len(images):
        return data
    rest = {k: v for k, v in data.items() if k != "image"}
    return {**rest, "mimeType": images[index].mime_type, "data": images[index].data}


def _usage(data: dict[str, Any]) -> Usage:
    counts = {f.name: data.get(f.name, 0) for f in fields(Usage)}
    return Usage(**{name: value if isinstance(value, int) else 0 for name, value in counts.items()})


_DEFAULTS = {
    f.name: f.default_factory() if callable(f.default_factory) else f.default
    for f in fields(Message)
    if f.name != "role"
}


# Derived ids are UUIDs too (version 5), named in this namespace: the same inputs always give the same id.
_DERIVED_IDS = UUID("0b9f5c1e-6f3a-4d8e-9a51-3c2d7e1f4a60")


def new_message_id() -> str:
    return str(uuid4())


def thought_id(message_id: str) -> str:
    """The id of an assistant message's thinking: a message of its own to the client, derived from the
    message's id so that the live chunks and a replay's agree without storing a second id."""
    return str(uuid5(_DERIVED_IDS, f"{message_id}/thought"))


def message_ids(session_id: str, history: list[Message]) -> list[str]:
    """Each message's id: its own, or for one stored before ids were kept, one derived from the session
    and its position in the log (append-only, so every load of the session derives the same)."""
    return [m.id or str(uuid5(_DERIVED_IDS, f"{session_id}/{index}")) for index, m in enumerate(history)]


def user(text: str) -> Message:
    return Message(role="user", text=encodable(text))


def tool_result(
    call: ToolCall,
    text: str,
    *,
    is_error: bool = False,
    images: list[Image] | None = None,
    title: str = "",
    kind: str = "",
    shown: Shown | None = None,
) -> Message:
    # A file name that is not UTF-8 reaches a tool's output as lone surrogates (see encodable.py).
    return Message(
        role="tool",
        text=encodable(text),
        tool_call_id=call.id,
        tool_name=call.name,
        tool_title=title,
        tool_kind=kind,
        is_error=is_error,
        images=list(images or []),
        shown=shown,
    )


def context_messages(history: list[Message]) -> list[Message]:
    """What the model sees: the latest summary, the turns it kept, and everything after it."""
    for index in range(len(history) - 1, -1, -1):
        summary = history[index]
        if summary.summary:
            return [summary, *history[index - summary.kept : index], *history[index + 1 :]]
    return history


def unanswered_tool_calls(history: list[Message]) -> list[ToolCall]:
    """Tool calls that have no result yet, in order. Providers reject a history that has any."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    return [c for m in history if m.role == "assistant" for c in m.tool_calls if c.id not in answered]
