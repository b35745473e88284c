// The web client's state and wiring: which session is open (named in the URL, ?session=<id>, so that a
// reload returns to it), the turn in flight, and what each ACP message changes on the page.

import { AcpClient, RpcError, sleep } from "./acp.js";
import { Composer } from "./composer.js";
import { PermissionDialog } from "./permission.js";
import { SessionList } from "./sessions.js";
import { ConfigSelectors, showPlan } from "./settings.js";
import { saveToken, storedToken, takeTokenFromFragment } from "./token.js";
import { Transcript } from "./transcript.js";

const CWD_META_KEY = "iac-code/cwd"; // the server's directory, in initialize's _meta
const BUSY_RETRIES = 10; // session/load while the session's turn (of a connection just lost) is ending
const MAX_LIST_PAGES = 20; // pages of session/list read to find the session the URL names
const READY_MARK = "iac-code:interactive";
const SESSION_NOT_FOUND = "Session not found"; // the agent's error data for a session it does not have

const NARROW = matchMedia("(max-width: 720px)"); // style.css folds the session list above the conversation
const $ = (id) => document.getElementById(id);

class App {
  constructor() {
    this.session = null; // the open session: {sessionId, cwd}
    this.running = null; // the session whose prompt is in flight
    this.loads = 0; // catch-ups and session/loads in flight: no prompt until the history is in
    this.connected = false;
    this.opening = null; // updates that came before session/new answered (then the id is known)
    this.nextCursor = null;
    this.stale = false; // messages of the open session were lost: load it again once no turn runs
    this.transcript = new Transcript($("transcript"));
    this.permissions = new PermissionDialog($("permission-dialog"));
    this.sessions = new SessionList($("session-list"), {
      open: (info) => this.guard(this.open(info)),
      fork: (info) => this.guard(this.fork(info)),
      remove: (info) => this.guard(this.remove(info)),
    });
    this.selectors = new ConfigSelectors($("config-options"), (id, value) => this.guard(this.setOption(id, value)));
    this.composer = new Composer($("composer"), (blocks) => this.guard(this.prompt(blocks)));
    this.client = new AcpClient({
      token: storedToken,
      askToken: (reason) => this.askToken(reason),
      notification: (method, params) => this.notification(method, params),
      request: (method, params) => this.request(method, params),
      connected: (agent, isReconnect) => this.guard(this.onConnected(agent, isReconnect)),
      status: (state, text) => this.status(state, text),
      lost: () => this.lost(),
    });
    $("new-session-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.guard(this.newSession($("cwd-input").value.trim()));
    });
    $("cancel").addEventListener("click", () => this.cancel());
    $("token-dialog").addEventListener("cancel", (event) => event.preventDefault()); // nothing works without it
    $("more-sessions").addEventListener("click", () => this.guard(this.listMore()));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !document.querySelector("dialog[open]")) this.cancel();
    });
  }

  start() {
    takeTokenFromFragment();
    // A page kept in the back/forward cache would otherwise hold its stream (one of the browser's six
    // connections to the server) while hidden; coming back, it connects again and reloads its session.
    addEventListener("pagehide", () => this.client.close());
    addEventListener("pageshow", (event) => event.persisted && this.client.connect());
    this.client.connect();
  }

  /** Shows what went wrong with a user's action instead of leaving it in the console. */
  async guard(promise) {
    try {
      await promise;
    } catch (error) {
      this.transcript.notice(error.message);
    }
  }

  // -- connection -------------------------------------------------------------------------------

  status(state, text) {
    const node = $("connection-status");
    node.dataset.state = state;
    node.textContent = text;
    this.connected = state === "connected";
    if (state === "connected") node.dataset.transport = this.client.transport?.name ?? "";
    this.updateControls();
  }

  askToken(reason) {
    const dialog = $("token-dialog");
    $("token-reason").textContent = reason || "Enter the token the server was started with (IACCODE_ACP_HTTP_TOKEN). It is kept in this tab only.";
    $("token-input").value = "";
    return new Promise((resolve) => {
      $("token-form").addEventListener("submit", () => {
        saveToken($("token-input").value.trim());
        resolve();
      }, { once: true });
      dialog.showModal();
    });
  }

  async onConnected(agent, isReconnect) {
    this.loads++; // the open session is not there yet on this connection
    try {
      await this.catchUp(agent, isReconnect);
    } finally {
      this.loads--;
      this.updateControls();
      // The page can be used from here on: a mark for measurements (bench/web.py reads its startTime).
      if (!isReconnect) performance.mark(READY_MARK);
    }
  }

  /** After (re)connecting: the agent's capabilities, the session list, and the open session loaded. */
  async catchUp(agent, isReconnect) {
    this.composer.allowImages(Boolean(agent.agentCapabilities?.promptCapabilities?.image));
    const cwdInput = $("cwd-input");
    if (!cwdInput.value && agent._meta?.[CWD_META_KEY]) cwdInput.value = agent._meta[CWD_META_KEY];
    if (isReconnect) {
      this.permissions.cancelAll(); // asked on the connection that is gone: nobody waits for the answer
      this.running = null;
      this.updateControls();
    }
    await this.listSessions();
    const wanted = isReconnect ? this.session?.sessionId : new URLSearchParams(location.search).get("session");
    if (!wanted) return;
    const info = this.sessions.find(wanted) ?? (await this.findSession(wanted));
    const cwd = info?.cwd ?? this.session?.cwd;
    if (!cwd) {
      this.transcript.notice(`Session ${wanted} was not found.`);
      this.showUrl(null);
      return;
    }
    await this.open({ sessionId: wanted, cwd });
  }

  lost() {
    this.stale = true;
    if (this.running === null) this.guard(this.reload());
  }

  /** Loads the open session again (after messages were lost): the agent's history is the truth. */
  async reload() {
    this.stale = false;
    if (this.session) await this.open(this.session);
  }

  // -- the session list ---------------------------------------------------------------------------

  async listSessions() {
    const { sessions, nextCursor } = await this.client.request("session/list", {});
    this.sessions.show(sessions);
    this.setCursor(nextCursor);
  }

  async listMore() {
    const { sessions, nextCursor } = await this.client.request("session/list", { cursor: this.nextCursor });
    this.sessions.show(sessions, true);
    this.setCursor(nextCursor);
  }

  setCursor(cursor) {
    this.nextCursor = cursor ?? null;
    $("more-sessions").hidden = !this.nextCursor;
  }

  async findSession(sessionId) {
    for (let page = 0; page < MAX_LIST_PAGES && this.nextCursor; page++) {
      await this.listMore();
      const info = this.sessions.find(sessionId);
      if (info) return info;
    }
    return null;
  }

  // -- sessions -----------------------------------------------------------------------------------

  async newSession(cwd) {
    const early = (this.opening = []);
    let result;
    try {
      result = await this.client.request("session/new", { cwd, mcpServers: [] });
    } finally {
      this.opening = null;
    }
    this.show({ sessionId: result.sessionId, cwd }, "New session: send a prompt.");
    this.sessions.upsert({ sessionId: result.sessionId, cwd, title: null, updatedAt: new Date().toISOString() });
    this.selectors.show(result.configOptions);
    for (const params of early.filter((p) => p.sessionId === result.sessionId)) this.sessionUpdate(params.update);
    this.composer.focus();
  }

  /** Opens a saved session: its history replayed (session/load sends it before answering). */
  async open({ sessionId, cwd }) {
    this.show({ sessionId, cwd }, "");
    this.loads++;
    this.updateControls();
    try {
      await this.load(sessionId, cwd);
    } finally {
      this.loads--;
      this.updateControls();
    }
  }

  async load(sessionId, cwd) {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.client.request("session/load", { sessionId, cwd, mcpServers: [] });
        if (this.session?.sessionId === sessionId) this.selectors.show(result.configOptions);
        return;
      } catch (error) {
        const busy = error instanceof RpcError && /prompt is running/.test(error.message);
        if (!busy || attempt >= BUSY_RETRIES || this.session?.sessionId !== sessionId) throw error;
        this.transcript.clear("", cwd); // the replay starts again
        await sleep(300);
      }
    }
  }

  async fork(info) {
    const result = await this.client.request("session/fork", { sessionId: info.sessionId, cwd: info.cwd, mcpServers: [] });
    this.sessions.upsert({ sessionId: result.sessionId, cwd: info.cwd, title: info.title ? `${info.title} (fork)` : null, updatedAt: new Date().toISOString() });
    await this.open({ sessionId: result.sessionId, cwd: info.cwd });
  }

  async remove(info) {
    if (!confirm(`Delete “${info.title || "Untitled session"}” and its history?`)) return;
    await this.client.request("session/delete", { sessionId: info.sessionId });
    this.sessions.remove(info.sessionId);
    if (this.session?.sessionId === info.sessionId) {
      this.session = null;
      this.transcript.clear("Choose a session or start a new one.");
      this.showUrl(null);
      this.updateControls();
    }
  }

  /** Makes `session` the open one: an empty transcript, its id in the URL and the list. */
  show(session, emptyText) {
    this.session = session;
    this.transcript.clear(emptyText, session.cwd);
    this.selectors.show([]);
    this.composer.setCommands([]);
    showPlan($("plan-panel"), []);
    $("usage").textContent = "";
    this.sessions.markOpen(session.sessionId);
    if (NARROW.matches) $("sessions-panel").open = false; // the conversation gets the small screen
    this.showUrl(session.sessionId);
    this.updateControls();
  }

  showUrl(sessionId) {
    const url = new URL(location.href);
    if (sessionId) url.searchParams.set("session", sessionId);
    else url.searchParams.delete("session");
    history.replaceState(history.state, "", url);
  }

  async setOption(configId, value) {
    const sessionId = this.session.sessionId;
    try {
      const result = await this.client.request("session/set_config_option", { sessionId, configId, value });
      if (this.session?.sessionId === sessionId) this.selectors.show(result.configOptions);
    } catch (error) {
      this.selectors.show(this.selectors.options); // back to what the agent has
      throw error;
    }
  }

  // -- the turn -----------------------------------------------------------------------------------

  async prompt(blocks) {
    const sessionId = this.session.sessionId;
    for (const block of blocks) this.transcript.userBlock(block);
    this.running = sessionId;
    this.updateControls();
    try {
      const response = await this.sendPrompt(sessionId, blocks);
      if (this.session?.sessionId === sessionId) this.transcript.stopReason(response);
    } finally {
      if (this.running === sessionId) this.running = null;
      this.permissions.cancelAll(sessionId);
      this.updateControls();
      if (this.stale) await this.reload();
    }
  }

  /** session/prompt; sent once more after loading the session when the agent no longer had it in memory (its
   * instance died and another adopted the connection): that answer means the prompt did not run. */
  async sendPrompt(sessionId, blocks) {
    try {
      return await this.client.request("session/prompt", { sessionId, prompt: blocks });
    } catch (error) {
      const forgotten = error instanceof RpcError && error.data?.sessionId === SESSION_NOT_FOUND;
      if (!forgotten || this.session?.sessionId !== sessionId) throw error;
      await this.open(this.session); // the replay replaces the view, this prompt included
      for (const block of blocks) this.transcript.userBlock(block);
      return await this.client.request("session/prompt", { sessionId, prompt: blocks });
    }
  }

  cancel() {
    if (!this.running) return;
    this.permissions.cancelAll(this.running);
    this.client.notify("session/cancel", { sessionId: this.running }).catch(() => {});
  }

  updateControls() {
    const ready = this.connected && this.session !== null;
    this.composer.enable(ready, this.running === null && this.loads === 0);
    $("cancel").disabled = this.running === null;
    $("new-session").disabled = !this.connected;
  }

  // -- what the agent sends -------------------------------------------------------------------------

  notification(method, params) {
    if (method !== "session/update") return;
    const { sessionId, update } = params;
    if (update.sessionUpdate === "session_info_update" && update.title !== undefined) {
      if (this.sessions.find(sessionId)) this.sessions.upsert({ sessionId, title: update.title });
    }
    if (sessionId === this.session?.sessionId) this.sessionUpdate(update);
    else if (this.opening) this.opening.push(params);
  }

  sessionUpdate(update) {
    switch (update.sessionUpdate) {
      case "plan":
        showPlan($("plan-panel"), update.entries ?? []);
        break;
      case "available_commands_update":
        this.composer.setCommands(update.availableCommands ?? []);
        break;
      case "current_mode_update":
        this.selectors.setMode(update.currentModeId);
        break;
      case "config_option_update":
        this.selectors.show(update.configOptions);
        break;
      case "usage_update":
        $("usage").textContent = `Context: ${update.used.toLocaleString()} / ${update.size.toLocaleString()} tokens`;
        break;
      default:
        this.transcript.apply(update);
    }
  }

  async request(method, params) {
    if (method === "session/request_permission") return this.permissions.ask(params);
    throw new RpcError({ code: -32601, message: `Method not found: ${method}` });
  }
}

new App().start();
