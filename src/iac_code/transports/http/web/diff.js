// A file edit as a line diff: removed lines, added lines, and unchanged runs shortened to their context.

import { diffLines } from "./vendor/diff/diff/line.js";
import { element } from "./dom.js";

const CONTEXT_LINES = 3;

/** `<figure>` with the path and the diff of `oldText` (absent: a new file) → `newText`. */
export function renderDiff({ path, oldText, newText }) {
  const figure = element("figure", { class: "diff" });
  const added = oldText == null ? " (new file)" : "";
  figure.append(element("figcaption", {}, `${path}${added}`));
  const pre = element("pre", { class: "diff-lines" });
  const parts = diffLines(oldText ?? "", newText ?? "");
  parts.forEach((part, index) => {
    const lines = part.value.replace(/\n$/, "").split("\n");
    if (part.added || part.removed) {
      const [mark, kind] = part.added ? ["+", "added"] : ["-", "removed"];
      for (const line of lines) pre.append(element("span", { class: `line ${kind}` }, `${mark} ${line}\n`));
      return;
    }
    for (const line of context(lines, index > 0, index < parts.length - 1)) {
      const kind = line === null ? "skipped" : "same";
      pre.append(element("span", { class: `line ${kind}` }, line === null ? "  …\n" : `  ${line}\n`));
    }
  });
  figure.append(pre);
  return figure;
}

/** The unchanged lines worth showing: those near a change; null stands for the ones left out. */
function context(lines, changeBefore, changeAfter) {
  const head = changeBefore ? CONTEXT_LINES : 0;
  const tail = changeAfter ? CONTEXT_LINES : 0;
  if (lines.length <= head + tail + 1) return lines;
  return [...lines.slice(0, head), null, ...lines.slice(lines.length - tail)];
}
