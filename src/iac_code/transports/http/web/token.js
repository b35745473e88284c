// The bearer token: read once from the URL fragment (#token=…, then removed from the address bar) or asked
// for, kept in this tab's sessionStorage only. It never goes into a URL query or a log line.

const STORAGE_KEY = "iac-code.token";

/** Moves a `#token=` fragment into session storage and out of the address bar and history. */
export function takeTokenFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (!fragment.has("token")) return;
  const token = fragment.get("token").trim();
  if (token) saveToken(token);
  fragment.delete("token");
  const rest = fragment.toString();
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

export function storedToken() {
  return sessionStorage.getItem(STORAGE_KEY) || "";
}

export function saveToken(token) {
  sessionStorage.setItem(STORAGE_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** The WebSocket subprotocol that carries the token: a browser cannot set headers on a WebSocket. */
export function bearerProtocol(token) {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "bearer." + btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
