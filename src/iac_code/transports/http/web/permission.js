// The permission dialog: what the agent wants to do (title, kind, paths, input, the request's content), the
// infrastructure plan when the request carries one (rawInput.plan: counts, then destroys and replaces first),
// and the options it offers as buttons. Requests wait their turn; Escape answers "cancelled".

import { element } from "./dom.js";
import { renderContent } from "./toolcall.js";

// The plan's actions, most dangerous first: what a reviewer must not miss comes first.
const ACTION_ORDER = ["delete", "replace", "forget", "update", "create", "move"];
const COUNT_WORDS = {
  delete: "to destroy",
  replace: "to replace",
  forget: "to forget",
  update: "to change",
  create: "to add",
  move: "to move",
};
const VERBS = { delete: "destroy", replace: "replace", forget: "forget", update: "update", create: "create", move: "move" };
const OPTION_ORDER = ["allow_once", "allow_always", "reject_once", "reject_always"];
const SHOWN_RESOURCES = 50;

export class PermissionDialog {
  constructor(dialog) {
    this.dialog = dialog;
    this.title = dialog.querySelector("#permission-title");
    this.body = dialog.querySelector("#permission-body");
    this.options = dialog.querySelector("#permission-options");
    this.queue = [];
    this.showing = null;
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault(); // the answer closes it, so that the queue moves on
      this.finish({ outcome: "cancelled" });
    });
  }

  /** Asks the user; resolves with the `session/request_permission` result. */
  ask(params) {
    return new Promise((resolve) => {
      this.queue.push({ params, resolve });
      if (!this.showing) this.next();
    });
  }

  /** Answers every question of `sessionId` (all when null) "cancelled": the turn ended or the connection went. */
  cancelAll(sessionId = null) {
    const matches = (item) => sessionId === null || item.params.sessionId === sessionId;
    for (const item of this.queue.filter(matches)) item.resolve({ outcome: { outcome: "cancelled" } });
    this.queue = this.queue.filter((item) => !matches(item));
    if (this.showing && matches(this.showing)) this.finish({ outcome: "cancelled" });
  }

  next() {
    this.showing = this.queue.shift() ?? null;
    if (!this.showing) {
      if (this.dialog.open) this.dialog.close();
      return;
    }
    this.render(this.showing.params);
    if (!this.dialog.open) this.dialog.showModal();
    this.options.querySelector("button")?.focus();
  }

  finish(outcome) {
    if (!this.showing) return;
    this.showing.resolve({ outcome });
    this.next();
  }

  render({ toolCall, options }) {
    const input = toolCall.rawInput ?? {};
    this.title.textContent = toolCall.title ?? "Permission";
    const parts = [element("p", { class: "permission-kind" }, `Kind: ${toolCall.kind ?? "other"}`)];
    if (input.plan) parts.push(renderPlanSummary(input.plan));
    if (toolCall.locations?.length) {
      const items = toolCall.locations.map(({ path, line }) => element("li", {}, element("code", {}, line != null ? `${path}:${line}` : path)));
      parts.push(element("ul", { class: "tool-locations", "aria-label": "Locations" }, ...items));
    }
    if (typeof input.command === "string") parts.push(element("pre", { class: "output terminal" }, input.command));
    for (const item of toolCall.content ?? []) parts.push(renderContent(item)); // the question's details, not output
    const { plan, ...rest } = input;
    if (Object.keys(rest).length) {
      const raw = element("pre", { class: "output" }, JSON.stringify(rest, null, 2));
      parts.push(element("details", { class: "raw-input" }, element("summary", {}, "Input"), raw));
    }
    this.body.replaceChildren(...parts.filter(Boolean));
    const sorted = [...options].sort((a, b) => OPTION_ORDER.indexOf(a.kind) - OPTION_ORDER.indexOf(b.kind));
    this.options.replaceChildren(
      ...sorted.map((option) => {
        const button = element("button", { type: "button", class: `option ${option.kind}`, "data-testid": "permission-option", "data-kind": option.kind }, option.name);
        button.addEventListener("click", () => this.finish({ outcome: "selected", optionId: option.optionId }));
        return button;
      }),
    );
  }
}

/** An infrastructure plan (the plan contract): counts, then each resource, destroys and replaces first. */
function renderPlanSummary(plan) {
  const counts = plan.counts ?? {};
  const section = element("section", { class: "plan-summary", "data-testid": "plan-summary", "aria-label": "Infrastructure plan" });
  section.append(element("h3", {}, `${plan.tool ?? "terraform"} plan${plan.directory ? ` in ${plan.directory}` : ""}`));
  const changing = ACTION_ORDER.filter((action) => counts[action] > 0);
  const countList = element("ul", { class: "plan-counts" });
  for (const action of changing) {
    countList.append(element("li", { class: `count ${action}`, "data-action": action }, `${counts[action]} ${COUNT_WORDS[action]}`));
  }
  section.append(changing.length ? countList : element("p", {}, "No changes."));
  const resources = [...(plan.resources ?? [])].sort((a, b) => ACTION_ORDER.indexOf(a.action) - ACTION_ORDER.indexOf(b.action));
  const list = element("ul", { class: "plan-resources" });
  for (const resource of resources.slice(0, SHOWN_RESOURCES)) {
    const why = resource.replacePaths?.length ? ` (forced by ${resource.replacePaths.map(pathText).join(", ")})` : "";
    list.append(element("li", { class: `resource ${resource.action}`, "data-action": resource.action }, `${VERBS[resource.action] ?? resource.action} `, element("code", {}, resource.address), why));
  }
  if (resources.length > SHOWN_RESOURCES) list.append(element("li", {}, `… and ${resources.length - SHOWN_RESOURCES} more`));
  section.append(list);
  return section;
}

/** An attribute path as the agent's own text shows it: names joined by dots, list indexes in brackets. */
function pathText(path) {
  return path.map((step, index) => (typeof step === "number" ? `[${step}]` : index ? `.${step}` : step)).join("");
}
