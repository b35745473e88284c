// The conversation as it streams (or is replayed by session/load): user messages, the agent's answers as
// markdown, its thoughts folded away, tool-call cards, and each turn's stop reason and usage.
// Consecutive chunks of one kind grow the same block; anything else starts a new one.

import { element } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { ToolCard } from "./toolcall.js";

export class Transcript {
  constructor(node) {
    this.node = node;
    this.clear("Choose a session or start a new one.");
  }

  /** Empties the view for a session in `cwd` (paths inside it are shown relative to it). */
  clear(emptyText = "", cwd = "") {
    this.cwd = cwd;
    this.node.replaceChildren(...(emptyText ? [element("p", { class: "empty-state" }, emptyText)] : []));
    this.cards = new Map();
    this.current = null; // the block the next chunk of the same kind goes to
    this.dirty = new Set(); // markdown blocks to render at the next frame
  }

  /** One `session/update` of the open session (others are the app's business). */
  apply(update) {
    switch (update.sessionUpdate) {
      case "user_message_chunk":
        this.userBlock(update.content);
        break;
      case "agent_message_chunk":
        if (update.content?.type === "text") this.agentText(update.content.text);
        break;
      case "agent_thought_chunk":
        if (update.content?.type === "text") this.thoughtText(update.content.text);
        break;
      case "tool_call":
      case "tool_call_update":
        this.toolCall(update);
        break;
    }
  }

  /** The user's prompt as sent (live) or replayed; a text after a text is the next prompt. */
  userBlock(block) {
    if (block.type === "text" && this.current?.kind === "user" && this.current.node.querySelector(".user-text")) {
      this.current = null;
    }
    const message = this.block("user", () => element("div", { class: "message user", "data-testid": "user-message" }));
    if (block.type === "text") message.append(element("p", { class: "user-text" }, block.text));
    else if (block.type === "image") {
      message.append(element("img", { class: "prompt-image", src: `data:${block.mimeType};base64,${block.data}`, alt: "Attached image" }));
    } else if (block.type === "resource_link" || block.type === "resource") {
      message.append(element("p", { class: "user-resource" }, block.uri ?? block.resource?.uri ?? block.type));
    }
    this.scroll();
  }

  agentText(text) {
    const node = this.block("agent", () => {
      const message = element("div", { class: "message agent markdown", "data-testid": "agent-message" });
      message.source = "";
      return message;
    });
    node.source += text;
    this.renderSoon(node);
  }

  thoughtText(text) {
    const details = this.block("thought", () => {
      const body = element("div", { class: "thought-body markdown" });
      body.source = "";
      return element("details", { class: "thought", "data-testid": "thought" }, element("summary", {}, "Thinking"), body);
    });
    const body = details.querySelector(".thought-body");
    body.source += text;
    this.renderSoon(body);
  }

  toolCall(update) {
    let card = this.cards.get(update.toolCallId);
    if (!card) {
      card = new ToolCard(update.toolCallId, this.cwd);
      this.cards.set(update.toolCallId, card);
      this.append(card.node);
    }
    card.update(update);
    this.scroll();
  }

  stopReason({ stopReason, usage }) {
    const parts = [`Stopped: ${stopReason}`];
    if (usage) parts.push(`${usage.inputTokens} input, ${usage.outputTokens} output tokens`);
    this.append(element("p", { class: "stop-reason", role: "status", "data-testid": "stop-reason", "data-reason": stopReason }, parts.join(" · ")));
  }

  notice(text, kind = "error") {
    this.append(element("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text));
  }

  block(kind, make) {
    if (this.current?.kind !== kind) {
      const node = make();
      this.append(node);
      this.current = { kind, node };
    }
    return this.current.node;
  }

  append(node) {
    this.node.querySelector(".empty-state")?.remove();
    this.node.append(node);
    if (!node.matches(".message.user, .message.agent, .thought")) this.current = null;
    this.scroll();
  }

  renderSoon(node) {
    if (this.dirty.size === 0) requestAnimationFrame(() => this.flush());
    this.dirty.add(node);
  }

  /** Renders the markdown that changed since the last frame (a streamed answer re-renders once per frame). */
  flush() {
    for (const node of this.dirty) renderMarkdown(node, node.source);
    this.dirty.clear();
    this.scroll();
  }

  scroll() {
    this.node.scrollTop = this.node.scrollHeight;
  }
}
