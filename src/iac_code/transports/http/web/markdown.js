// Markdown to safe DOM: marked renders, DOMPurify removes whatever could run or restyle the page.
// Links open in a new tab without telling the target where they came from.

import { Marked } from "./vendor/marked/marked.esm.js";
import DOMPurify from "./vendor/dompurify/purify.es.mjs";

const marked = new Marked({ gfm: true, async: false });

const SANITIZE = {
  RETURN_DOM_FRAGMENT: true,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
  FORBID_ATTR: ["style"], // the CSP refuses inline styles anyway: keep the console quiet
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** Replaces `element`'s children with `text` rendered as sanitised markdown. */
export function renderMarkdown(element, text) {
  element.replaceChildren(DOMPurify.sanitize(marked.parse(text), SANITIZE));
}
