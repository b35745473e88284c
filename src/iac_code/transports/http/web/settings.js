// The open session's config options (model, mode) as selects, and its plan entries (the agent's update_plan).

import { element } from "./dom.js";

export class ConfigSelectors {
  /** `change(configId, value)` sets an option; the agent's answer comes back through `show`. */
  constructor(container, change) {
    this.container = container;
    this.change = change;
  }

  /** `options`: the session's `configOptions` (selects are shown; other kinds are not ours to edit). */
  show(options) {
    this.options = options ?? [];
    const selects = this.options.filter((option) => option.type === "select").map((option) => this.select(option));
    this.container.replaceChildren(...selects);
  }

  /** A `current_mode_update`: the mode select follows it. */
  setMode(modeId) {
    const mode = this.options?.find((option) => option.id === "mode");
    if (!mode) return;
    mode.currentValue = modeId;
    this.show(this.options);
  }

  select(option) {
    const id = `config-${option.id}`;
    const select = element("select", { id, "data-testid": `${option.id}-select`, "data-config-id": option.id });
    for (const choice of flatten(option.options)) {
      select.append(element("option", { value: choice.value, title: choice.description ?? "" }, choice.name ?? choice.value));
    }
    select.value = option.currentValue;
    select.addEventListener("change", () => this.change(option.id, select.value));
    return element("span", { class: "config-option" }, element("label", { for: id }, option.name ?? option.id), select);
  }
}

/** Select options may come in groups; a plain list of choices either way. */
function flatten(choices = []) {
  return choices.flatMap((choice) => (Array.isArray(choice.options) ? choice.options : [choice]));
}

export function showPlan(panel, entries) {
  const list = panel.querySelector("#plan-entries");
  list.replaceChildren(
    ...entries.map((entry) =>
      element("li", { class: `plan-entry ${entry.status}`, "data-testid": "plan-entry", "data-status": entry.status, "data-priority": entry.priority },
        element("span", { class: "plan-status", "aria-label": entry.status }, { pending: "○", in_progress: "…", completed: "✓" }[entry.status] ?? "•"),
        " ", entry.content)),
  );
  panel.hidden = entries.length === 0;
}
