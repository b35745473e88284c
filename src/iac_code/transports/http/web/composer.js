// The prompt: a textarea (Enter sends, Shift+Enter adds a line), images pasted or picked when the agent
// takes them, and the session's slash commands offered while the first word starts with "/".

import { element } from "./dom.js";

export class Composer {
  /** `send(blocks)` is called with the prompt's content blocks. */
  constructor(form, send) {
    this.form = form;
    this.input = form.querySelector("#prompt-input");
    this.sendButton = form.querySelector("#send");
    this.attachLabel = form.querySelector("#attach-label");
    this.imageInput = form.querySelector("#image-input");
    this.attachments = form.querySelector("#attachments");
    this.suggestions = form.querySelector("#command-suggestions");
    this.send = send;
    this.images = []; // {mimeType, data (base64), url (blob: for the thumbnail)}
    this.commands = [];
    this.highlighted = 0;
    this.imagesAllowed = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener("keydown", (event) => this.keydown(event));
    this.input.addEventListener("input", () => this.suggest());
    this.input.addEventListener("paste", (event) => this.paste(event));
    this.imageInput.addEventListener("change", () => {
      for (const file of this.imageInput.files) this.attach(file);
      this.imageInput.value = "";
    });
  }

  /** `open`: a session is open (the next prompt can be written); `idle`: no turn runs (it can be sent). */
  enable(open, idle) {
    this.input.disabled = !open;
    this.sendButton.disabled = !(open && idle);
  }

  allowImages(allowed) {
    this.imagesAllowed = allowed;
    this.attachLabel.hidden = !allowed;
  }

  setCommands(commands) {
    this.commands = commands;
    this.suggest();
  }

  focus() {
    this.input.focus();
  }

  keydown(event) {
    const open = !this.suggestions.hidden;
    if (open && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      const count = this.suggestions.children.length;
      this.highlight((this.highlighted + (event.key === "ArrowDown" ? 1 : count - 1)) % count);
    } else if (open && (event.key === "Tab" || (event.key === "Enter" && !event.shiftKey && !this.isWholeCommand()))) {
      event.preventDefault();
      this.complete(this.suggestions.children[this.highlighted].dataset.name);
    } else if (open && event.key === "Escape") {
      event.stopPropagation(); // closes the list; the next Escape cancels the turn
      this.closeSuggestions();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.submit();
    }
  }

  submit() {
    const text = this.input.value;
    if (this.sendButton.disabled || (!text.trim() && !this.images.length)) return;
    const blocks = [];
    if (text.trim()) blocks.push({ type: "text", text });
    for (const { mimeType, data } of this.images) blocks.push({ type: "image", mimeType, data });
    this.input.value = "";
    this.clearImages();
    this.closeSuggestions();
    this.send(blocks);
  }

  // -- slash commands ---------------------------------------------------------------------------

  /** The first word typed, when it is a command being typed ("/com"), else null. */
  typedCommand() {
    const match = /^\/(\S*)$/.exec(this.input.value.slice(0, this.input.selectionStart));
    return match ? match[1] : null;
  }

  isWholeCommand() {
    const typed = this.typedCommand();
    return this.commands.some((command) => command.name === typed);
  }

  suggest() {
    const typed = this.typedCommand();
    const matching = typed === null ? [] : this.commands.filter((command) => command.name.startsWith(typed));
    if (!matching.length) {
      this.closeSuggestions();
      return;
    }
    this.suggestions.replaceChildren(
      ...matching.map((command, index) => {
        const hint = command.input?.hint ? ` ${command.input.hint}` : "";
        const item = element("li", { role: "option", id: `command-${index}`, "data-name": command.name },
          element("strong", {}, `/${command.name}`), hint, element("span", { class: "description" }, command.description ?? ""));
        item.addEventListener("mousedown", (event) => {
          event.preventDefault(); // keep the focus in the textarea
          this.complete(command.name);
        });
        return item;
      }),
    );
    this.suggestions.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.highlight(Math.min(this.highlighted, matching.length - 1));
  }

  highlight(index) {
    this.highlighted = index;
    [...this.suggestions.children].forEach((item, i) => item.setAttribute("aria-selected", String(i === index)));
    this.input.setAttribute("aria-activedescendant", `command-${index}`);
  }

  complete(name) {
    const rest = this.input.value.slice(this.input.selectionStart).replace(/^\S*/, "");
    this.input.value = `/${name} ${rest.trimStart()}`;
    this.input.selectionStart = this.input.selectionEnd = name.length + 2;
    this.closeSuggestions();
  }

  closeSuggestions() {
    this.suggestions.hidden = true;
    this.highlighted = 0;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  // -- images -----------------------------------------------------------------------------------

  paste(event) {
    if (!this.imagesAllowed) return;
    const files = [...(event.clipboardData?.files ?? [])].filter((file) => file.type.startsWith("image/"));
    if (!files.length) return;
    event.preventDefault();
    files.forEach((file) => this.attach(file));
  }

  async attach(file) {
    if (!file.type.startsWith("image/")) return;
    const data = await base64(file);
    const image = { mimeType: file.type, data, url: URL.createObjectURL(file) };
    this.images.push(image);
    const remove = element("button", { type: "button", class: "remove", "aria-label": `Remove ${file.name || "image"}` }, "×");
    const item = element("li", {}, element("img", { src: image.url, alt: file.name || "Pasted image" }), remove);
    remove.addEventListener("click", () => {
      this.images = this.images.filter((other) => other !== image);
      URL.revokeObjectURL(image.url);
      item.remove();
    });
    this.attachments.append(item);
  }

  clearImages() {
    for (const image of this.images) URL.revokeObjectURL(image.url);
    this.images = [];
    this.attachments.replaceChildren();
  }
}

async function base64(file) {
  const url = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
  return url.slice(url.indexOf(",") + 1);
}
