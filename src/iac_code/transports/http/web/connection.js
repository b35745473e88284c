// The two ways to reach /acp, behind one small interface:
//   connect(initialize) → the initialize response; send(message); close();
//   onmessage(message) for every message after initialize; onclose(reason) once the connection is gone
//   (the agent forgot it or the socket closed: the client must initialize again); onstream(up) while the
//   connection lives but its stream is down (false) and back (true); onlost() when the server could not
//   keep every message for this client (a stream away too long): what is shown must be loaded again.
// A WebSocket carries JSON-RPC text frames both ways, and its close ends its connection. HTTP+SSE POSTs
// each message (202) and reads everything on one GET stream, resumed with Last-Event-ID after a drop.

import { bearerProtocol } from "./token.js";

/** The transport could not open (no WebSocket here, network down, server restarting). */
export class CannotOpen extends Error {}

/** The server wants a (valid) token. */
export class Unauthorized extends Error {}

/** The connection is gone: initialize again. */
export class ConnectionGone extends Error {}

const CONNECTION_ID_HEADER = "Acp-Connection-Id";
const SESSION_ID_HEADER = "Acp-Session-Id";
const RECONNECT_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000];
// A proxy that neither passes nor refuses an upgrade would leave the socket opening for minutes: past this,
// the client takes HTTP+SSE instead.
const SOCKET_OPEN_TIMEOUT_MS = 10000;

function acpUrl() {
  return new URL("/acp", location.href);
}

export class SocketTransport {
  name = "websocket";

  constructor(token) {
    this.token = token;
    this.socket = null;
    this.onmessage = () => {};
    this.onclose = () => {};
  }

  connect(initialize) {
    const url = acpUrl();
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const protocols = this.token ? ["acp", bearerProtocol(this.token)] : ["acp"];
    return new Promise((resolve, reject) => {
      let initialized = false;
      const socket = new WebSocket(url, protocols);
      this.socket = socket;
      const timer = setTimeout(() => socket.close(), SOCKET_OPEN_TIMEOUT_MS); // its close rejects
      socket.onopen = () => socket.send(JSON.stringify(initialize));
      socket.onmessage = (event) => {
        const message = parse(event.data);
        if (message === null) return;
        if (!initialized && message.id === initialize.id && !("method" in message)) {
          initialized = true;
          clearTimeout(timer);
          resolve(message);
        } else if (initialized) {
          this.onmessage(message);
        }
      };
      socket.onclose = (event) => {
        clearTimeout(timer);
        if (!initialized) reject(new CannotOpen(`WebSocket closed before initialize (${event.code})`));
        else this.onclose(`the socket closed (${event.code})`);
      };
    });
  }

  async send(message) {
    if (this.socket?.readyState !== WebSocket.OPEN) throw new ConnectionGone("the socket is closed");
    this.socket.send(JSON.stringify(message));
  }

  close() {
    if (!this.socket) return;
    this.socket.onclose = null;
    this.socket.close(1000);
  }
}

export class HttpTransport {
  name = "sse";

  constructor(token) {
    this.token = token;
    this.connectionId = null;
    this.lastEventId = null;
    this.closed = false;
    this.abort = new AbortController();
    this.onmessage = () => {};
    this.onclose = () => {};
    this.onstream = () => {};
    this.onlost = () => {};
  }

  headers(extra = {}) {
    const headers = { ...extra };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (this.connectionId) headers[CONNECTION_ID_HEADER] = this.connectionId;
    return headers;
  }

  async connect(initialize) {
    let response;
    try {
      response = await fetch(acpUrl(), {
        method: "POST",
        headers: this.headers({ "Content-Type": "application/json", Accept: "application/json" }),
        body: JSON.stringify(initialize),
        signal: this.abort.signal,
      });
    } catch (error) {
      throw new CannotOpen(`no answer from the server (${error.message})`);
    }
    if (response.status === 401) throw new Unauthorized("the server refused the token");
    if (!response.ok) throw new CannotOpen(await problem(response));
    this.connectionId = response.headers.get(CONNECTION_ID_HEADER);
    const answer = await response.json();
    this.readStream();
    return answer;
  }

  async send(message) {
    if (this.closed) throw new ConnectionGone("the connection is closed");
    const extra = { "Content-Type": "application/json" };
    const sessionId = message.params?.sessionId;
    if (typeof sessionId === "string") extra[SESSION_ID_HEADER] = sessionId;
    let response;
    try {
      response = await fetch(acpUrl(), { method: "POST", headers: this.headers(extra), body: JSON.stringify(message) });
    } catch (error) {
      throw new ConnectionGone(`the server did not answer (${error.message})`);
    }
    if (response.ok) return;
    const reason = await problem(response);
    if (response.status === 400 || response.status === 401) {
      this.lose(reason); // the connection is unknown to the server (restarted, reaped) or the token changed
      throw new ConnectionGone(reason);
    }
    throw new Error(reason);
  }

  close() {
    this.closed = true;
    this.abort.abort();
    if (this.connectionId) {
      fetch(acpUrl(), { method: "DELETE", headers: this.headers(), keepalive: true }).catch(() => {});
    }
  }

  lose(reason) {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.onclose(reason);
  }

  /** Reads the connection's stream until the connection is gone, opening it again after each drop. */
  async readStream() {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        const extra = { Accept: "text/event-stream" };
        if (this.lastEventId !== null) extra["Last-Event-ID"] = this.lastEventId;
        const response = await fetch(acpUrl(), { headers: this.headers(extra), signal: this.abort.signal });
        if (response.status === 400 || response.status === 401) {
          this.lose(await problem(response));
          return;
        }
        if (response.ok) {
          attempt = 0;
          this.onstream(true);
          await this.readEvents(response.body);
        }
      } catch (error) {
        if (this.closed) return;
      }
      this.onstream(false);
      const delay = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length - 1)];
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  async readEvents(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let event = { data: [], id: null, type: "message" };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (event.id !== null) this.lastEventId = event.id;
          const message = event.data.length ? parse(event.data.join("\n")) : null;
          if (event.type === "lost") this.onlost();
          else if (message !== null) this.onmessage(message);
          event = { data: [], id: null, type: "message" };
          continue;
        }
        if (line.startsWith(":")) continue; // a keepalive comment
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") event.data.push(value);
        else if (field === "id") event.id = value;
        else if (field === "event") event.type = value;
      }
    }
  }
}

function parse(text) {
  try {
    const message = JSON.parse(text);
    return message && typeof message === "object" && !Array.isArray(message) ? message : null;
  } catch {
    return null;
  }
}

async function problem(response) {
  try {
    const body = await response.json();
    return `${response.status}: ${body.error ?? JSON.stringify(body)}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}
