// The bearer token: read once from the URL fragment (#token=…, then removed from the address bar) or asked
// for, kept in this tab's sessionStorage only. It never goes into a URL query or a log line.

const STORAGE_KEY = "iac-code.token";

/** Moves a `#token=` fragment into session storage and out of the address bar and history. The value is
 * percent-decoded only ("+" stays a plus: tokens are not form data). */
export function takeTokenFromFragment() {
  const parts = location.hash.slice(1).split("&");
  const found = parts.find((part) => part.startsWith("token="));
  if (found === undefined) return;
  const token = safeDecode(found.slice("token=".length)).trim();
  if (token) saveToken(token);
  const rest = parts.filter((part) => part !== found && part !== "").join("&");
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a stray "%": taken as typed
  }
}

export function storedToken() {
  return sessionStorage.getItem(STORAGE_KEY) || "";
}

export function saveToken(token) {
  sessionStorage.setItem(STORAGE_KEY, token);
}

/** The WebSocket subprotocol that carries the token: a browser cannot set headers on a WebSocket. */
export function bearerProtocol(token) {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "bearer." + btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
