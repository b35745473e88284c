"""The conversation vocabulary shared by providers, the agent loop and the session store.

A history is a list of `Message`s in the order the model saw them. Each provider translates it to
its own wire format; the store writes each message as one JSON line (`to_dict` / `from_dict`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

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


@dataclass
class Message:
    """One turn of the conversation.

    - user: `text` (the prompt as the model sees it) and its `images`. `summary` marks a compaction summary: it
      replaces every earlier message in the model's context except the `kept` ones just before it.
      The log stays append-only, so a replay still shows the whole conversation.
    - assistant: `text`, `thinking` (+ `thinking_signature` for Anthropic), `tool_calls`.
    - tool: the result of the call `tool_call_id`; `is_error` for failures and denials; `images` the tool
      returned for the model; `tool_title` and `tool_kind` the call's title and kind as the client saw them (a
      replay shows them when the tool is gone, e.g. an MCP server not connected yet).
    """

    role: Role
    text: str = ""
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

    def to_dict(self) -> dict[str, Any]:
        # Drop defaults so a persisted line stays short and readable. Field by field, not asdict(): it
        # deep-copies every value, and this runs for every message the store appends.
        data: dict[str, Any] = {"role": self.role}
        for name, default in _DEFAULTS.items():
            value = getattr(self, name)
            if value != default:
                data[name] = [asdict(item) for item in value] if isinstance(value, list) else value  # calls, images
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        calls = [ToolCall(**c) for c in data.get("tool_calls", [])]
        images = [Image(**i) for i in data.get("images", [])]
        nested = ("tool_calls", "images")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k not in nested}
        return cls(**known, tool_calls=calls, images=images)


_DEFAULTS = {
    f.name: f.default_factory() if callable(f.default_factory) else f.default
    for f in fields(Message)
    if f.name != "role"
}


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
