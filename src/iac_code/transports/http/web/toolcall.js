// A tool call as a card: kind, title and status in its head; the paths it touches (path:line); then its
// content: text (a sub-agent's steps as a list), diffs, terminals, images. Long output starts collapsed.

import { renderDiff } from "./diff.js";
import { element } from "./dom.js";

const KIND_LABELS = {
  read: "Read",
  edit: "Edit",
  delete: "Delete",
  move: "Move",
  search: "Search",
  execute: "Run",
  think: "Think",
  fetch: "Fetch",
  switch_mode: "Mode",
  other: "Tool",
};
const STATUS_LABELS = { pending: "pending", in_progress: "running", completed: "done", failed: "failed" };
const STEP_MARK = /^[○…✓✗] /u; // how the agent shows a sub-agent's steps, one per line
const COLLAPSED_LINES = 12;
const COLLAPSED_CHARS = 1500;
const COLLAPSED_DIFF_LINES = 40; // a diff shows changes and their context only: it may be longer

export class ToolCard {
  /** `cwd`: the session's directory, left out of the paths shown. */
  constructor(id, cwd = "") {
    this.id = id;
    this.cwd = cwd;
    this.status = "pending";
    this.kind = "other";
    this.head = element("header", { class: "tool-head" });
    this.locations = element("ul", { class: "tool-locations", "aria-label": "Locations" });
    this.body = element("div", { class: "tool-body" });
    this.node = element("article", { class: "tool-call", "data-testid": "tool-call" });
    this.node.append(this.head, this.locations, this.body);
    this.title = "";
    this.render();
  }

  /** Applies a `tool_call` or `tool_call_update`: fields it carries replace the ones shown. */
  update(fields) {
    if (fields.title != null) this.title = fields.title;
    if (fields.kind != null) this.kind = fields.kind;
    if (fields.status != null) this.status = fields.status;
    if (fields.locations != null) this.showLocations(fields.locations);
    if (fields.content != null) this.showContent(fields.content);
    this.render();
  }

  render() {
    this.node.dataset.status = this.status;
    this.node.dataset.kind = this.kind;
    this.head.replaceChildren(
      element("span", { class: "tool-kind" }, KIND_LABELS[this.kind] ?? this.kind),
      element("span", { class: "tool-title" }, this.title || this.id),
      element("span", { class: `tool-status status-${this.status}` }, STATUS_LABELS[this.status] ?? this.status),
    );
  }

  showLocations(locations) {
    this.locations.replaceChildren(
      ...locations.map(({ path, line }) => {
        const shown = shortPath(path, this.cwd);
        return element("li", {}, element("code", { title: path }, line != null ? `${shown}:${line}` : shown));
      }),
    );
  }

  showContent(content) {
    this.body.replaceChildren(...content.map((item) => renderContent(item, this.kind, this.cwd)).filter(Boolean));
  }
}

/** One entry of a tool call's `content` (also used by the permission dialog). */
export function renderContent(item, kind = "other", cwd = "") {
  if (item.type === "diff") {
    const diff = renderDiff({ ...item, path: shortPath(item.path, cwd) });
    const lines = diff.querySelectorAll(".line").length;
    return lines > COLLAPSED_DIFF_LINES ? collapsed(diff, lines, "diff") : diff;
  }
  if (item.type === "terminal") return element("p", { class: "terminal-ref" }, `Terminal ${item.terminalId}`);
  if (item.type === "content") return renderBlock(item.content, kind);
  return null;
}

function renderBlock(block, kind) {
  if (!block) return null;
  if (block.type === "text") return renderText(block.text, kind);
  if (block.type === "image") return element("img", { class: "tool-image", src: `data:${block.mimeType};base64,${block.data}`, alt: "Tool image" });
  if (block.type === "resource_link") return element("p", {}, `Resource: ${block.name ?? block.uri}`);
  if (block.type === "resource") return renderText(block.resource?.text ?? block.resource?.uri ?? "", kind);
  return element("p", { class: "unsupported" }, `(${block.type} content)`);
}

function renderText(text, kind) {
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length && lines.every((line) => STEP_MARK.test(line))) {
    return element("ol", { class: "steps", "aria-label": "Steps" }, ...lines.map((line) => element("li", {}, line)));
  }
  const pre = element("pre", { class: kind === "execute" ? "output terminal" : "output" }, text);
  const long = lines.length > COLLAPSED_LINES || text.length > COLLAPSED_CHARS;
  return long ? collapsed(pre, lines.length, "output") : pre;
}

function collapsed(node, lineCount, what) {
  return element("details", { class: "long-output" }, element("summary", {}, `Show ${what} (${lineCount} lines)`), node);
}

/** `path` relative to the session's directory when it is inside it. */
function shortPath(path, cwd) {
  return cwd && path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}
