// The sidebar's list of saved sessions (session/list): title and time of each, the open one marked, with
// open, fork and delete actions. The app does the talking; this only shows and reports clicks.

import { element } from "./dom.js";

export class SessionList {
  /** `actions`: open(info), fork(info), remove(info). */
  constructor(list, actions) {
    this.list = list;
    this.actions = actions;
    this.sessions = [];
    this.openId = null;
  }

  /** Replaces the list (`append`: adds a further page). */
  show(sessions, append = false) {
    this.sessions = append ? [...this.sessions, ...sessions] : sessions;
    this.render();
  }

  find(sessionId) {
    return this.sessions.find((info) => info.sessionId === sessionId) ?? null;
  }

  /** Puts a session at the top (new, forked) or updates what is known of it (a title). */
  upsert(info) {
    const known = this.find(info.sessionId);
    if (known) Object.assign(known, info);
    else this.sessions.unshift(info);
    this.render();
  }

  remove(sessionId) {
    this.sessions = this.sessions.filter((info) => info.sessionId !== sessionId);
    this.render();
  }

  markOpen(sessionId) {
    this.openId = sessionId;
    this.render();
  }

  render() {
    if (!this.sessions.length) {
      this.list.replaceChildren(element("li", { class: "empty-state" }, "No saved sessions yet."));
      return;
    }
    this.list.replaceChildren(...this.sessions.map((info) => this.item(info)));
  }

  item(info) {
    const title = info.title || "Untitled session";
    const open = element("button", { type: "button", class: "session-open", title: info.cwd ?? "" },
      element("span", { class: "session-title" }, title),
      element("span", { class: "session-meta" }, [when(info.updatedAt), info.cwd].filter(Boolean).join(" · ")));
    const fork = element("button", { type: "button", class: "icon", "aria-label": `Fork ${title}` }, "Fork");
    const remove = element("button", { type: "button", class: "icon danger", "aria-label": `Delete ${title}` }, "Delete");
    open.addEventListener("click", () => this.actions.open(info));
    fork.addEventListener("click", () => this.actions.fork(info));
    remove.addEventListener("click", () => this.actions.remove(info));
    const current = info.sessionId === this.openId;
    return element("li", { class: "session-item", "data-testid": "session-item", "data-session-id": info.sessionId, "aria-current": current ? "true" : false },
      open, element("span", { class: "session-actions" }, fork, remove));
  }
}

function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" });
}
