// An ACP client over one transport at a time: JSON-RPC requests and their answers, the agent's notifications
// and requests handed to the app, and the connection kept up. WebSocket is tried first, HTTP+SSE when the
// socket cannot open; `?transport=sse` or `?transport=websocket` forces one (a debugging aid). When the
// connection is gone the client initializes again (on whichever transport opens) and tells the app, which
// loads its open session again.

import { CannotOpen, ConnectionGone, HttpTransport, SocketTransport, Unauthorized } from "./connection.js";

const CLIENT_INFO = { name: "iac-code-web", title: "iac-code web client", version: "1" };
const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000];
const EVENTS_LOST = "_iac-code/events_lost"; // the server's WebSocket notice: messages this client missed

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  constructor({ code, message, data }) {
    super(data ? `${message}: ${typeof data === "string" ? data : JSON.stringify(data)}` : message);
    this.code = code;
    this.data = data;
  }
}

export class AcpClient {
  /**
   * @param {object} hooks
   *   token(): the bearer token, or "";  askToken(reason): resolves once the user gave one;
   *   notification(method, params);  request(method, params): the answer's result (may throw);
   *   connected(agent, isReconnect);  status(state, text);
   *   lost(): messages were lost on the way (the connection lives): what is shown must be loaded again
   */
  constructor(hooks, forced = new URLSearchParams(location.search).get("transport")) {
    this.hooks = hooks;
    this.forced = forced === "sse" || forced === "websocket" ? forced : null;
    this.transport = null;
    this.nextId = 1;
    this.pending = new Map();
    this.everConnected = false;
  }

  /** Connects, retrying until it works, then lets the app catch up (its `connected` hook). */
  async connect() {
    for (let attempt = 0; ; attempt++) {
      this.hooks.status("connecting", attempt ? "Reconnecting…" : "Connecting…");
      let agent;
      try {
        agent = await this.open();
      } catch (error) {
        if (error instanceof Unauthorized) {
          this.hooks.status("unauthorized", "Token needed");
          await this.hooks.askToken(this.hooks.token() ? "The server refused this token." : "");
          attempt = -1;
          continue;
        }
        this.hooks.status("offline", `Offline: ${error.message}`);
        await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]);
        continue;
      }
      const isReconnect = this.everConnected;
      this.everConnected = true;
      this.label = `Connected (${this.transport.name === "websocket" ? "WebSocket" : "HTTP+SSE"})`;
      this.hooks.status("connected", this.label);
      await this.hooks.connected(agent, isReconnect);
      return;
    }
  }

  /** Initializes on the first transport that opens (it becomes `this.transport`); the initialize result. */
  async open() {
    const kinds = this.forced ? [this.forced] : ["websocket", "sse"];
    let failure = new CannotOpen("no transport");
    for (const kind of kinds) {
      const transport = kind === "websocket" ? new SocketTransport(this.hooks.token()) : new HttpTransport(this.hooks.token());
      try {
        const answer = await transport.connect(this.message("initialize", initializeParams()));
        if (answer.error) throw new RpcError(answer.error);
        this.adopt(transport);
        return answer.result;
      } catch (error) {
        transport.close();
        if (error instanceof Unauthorized) throw error;
        failure = error;
      }
    }
    throw failure;
  }

  /** Ends the connection (the page is going away): the server frees it now, not at its idle timeout. */
  close() {
    const transport = this.transport;
    this.transport = null;
    transport?.close();
  }

  adopt(transport) {
    this.transport = transport;
    transport.onmessage = (message) => this.receive(message);
    transport.onlost = () => this.hooks.lost();
    transport.onstream = (up) => {
      if (this.transport === transport) this.hooks.status(up ? "connected" : "connecting", up ? this.label : "Reconnecting…");
    };
    transport.onclose = (reason) => {
      if (this.transport !== transport) return;
      this.transport = null;
      this.failPending(new ConnectionGone(reason));
      this.connect();
    };
  }

  failPending(error) {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of waiting) reject(error);
  }

  message(method, params) {
    return { jsonrpc: "2.0", id: this.nextId++, method, params };
  }

  /** Sends a request; resolves with its result, rejects with an RpcError or ConnectionGone. */
  request(method, params) {
    const message = this.message(method, params);
    return new Promise((resolve, reject) => {
      if (!this.transport) {
        reject(new ConnectionGone("not connected"));
        return;
      }
      this.pending.set(message.id, { resolve, reject });
      this.transport.send(message).catch((error) => {
        this.pending.delete(message.id);
        reject(error);
      });
    });
  }

  async notify(method, params) {
    await this.transport?.send({ jsonrpc: "2.0", method, params });
  }

  receive(message) {
    if ("method" in message) {
      if ("id" in message) this.answer(message);
      else if (message.method === EVENTS_LOST) this.hooks.lost();
      else this.deliver(message.method, message.params ?? {});
      return;
    }
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    if (message.error) waiting.reject(new RpcError(message.error));
    else waiting.resolve(message.result);
  }

  deliver(method, params) {
    try {
      this.hooks.notification(method, params);
    } catch (error) {
      // One update the page cannot show must not stop the stream (a throw here would drop and reopen it).
      console.error(`iac-code: could not show a ${method}`, error);
    }
  }

  async answer({ id, method, params }) {
    const transport = this.transport;
    let reply;
    try {
      reply = { jsonrpc: "2.0", id, result: await this.hooks.request(method, params ?? {}) };
    } catch (error) {
      const code = error instanceof RpcError ? error.code : -32603;
      reply = { jsonrpc: "2.0", id, error: { code, message: error.message } };
    }
    // An answer belongs to the connection that asked: after a reconnect nobody waits for it.
    if (transport && transport === this.transport) await transport.send(reply).catch(() => {});
  }
}

function initializeParams() {
  return {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: CLIENT_INFO,
  };
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
