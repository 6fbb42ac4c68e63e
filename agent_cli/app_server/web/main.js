// The page's start: the token (from the address once, then the tab's session storage, or typed),
// the connection, and which view shows: #/ the sessions, #/thread/ID one session.
import { h, clear } from "./dom.js";
import { Rpc } from "./rpc.js";
import { SessionsView } from "./sessions.js";
import { ThreadView } from "./thread.js";

const TOKEN_KEY = "agent-app-server-token";
const app = document.getElementById("app");
let rpc = null;
let view = null;

function tokenFromAddress() {
  const url = new URL(location.href);
  const token = url.searchParams.get("token");
  if (token === null) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  url.searchParams.delete("token");
  history.replaceState(null, "", url.pathname + url.search + url.hash); // off the address bar and the history
}

function tokenPrompt(problem) {
  if (view) view.close();
  view = null;
  const input = h("input", { type: "password", name: "token", autocomplete: "current-password", "aria-label": "token",
    placeholder: "the server's token", required: true });
  const form = h("form", { class: "token-prompt", onsubmit: (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    connect();
  } },
  h("h1", {}, "agent sessions"),
  h("p", {}, "Enter the token this server was started with (--ws-token-file)."),
  problem ? h("p", { class: "problem" }, problem) : null,
  input, h("button", { type: "submit", class: "send" }, "Connect"));
  clear(app).append(form);
  input.focus();
}

async function connect() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return tokenPrompt();
  clear(app).append(h("div", { class: "loading" }, "Connecting…"));
  try {
    rpc = await Rpc.open(`ws://${location.host}/`, token);
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    return tokenPrompt("The server refused that token (or cannot be reached).");
  }
  rpc.onClose = () => disconnected();
  await rpc.request("initialize", {
    clientInfo: { name: "agent-web", title: "agent-cli web page", version: "1" },
    capabilities: { experimentalApi: true },
  });
  rpc.notify("initialized");
  chrome();
  route();
}

function chrome() {
  const content = h("div", { id: "view" });
  clear(app).append(
    h("nav", { class: "bar" },
      h("a", { href: "#/", class: "home" }, "Sessions"),
      h("button", { class: "forget", onclick: forget, title: "forget the token in this tab" }, "Sign out")),
    content);
}

function forget() {
  sessionStorage.removeItem(TOKEN_KEY);
  const closing = rpc;
  rpc = null;
  closing?.close();
  tokenPrompt();
}

function disconnected() {
  if (rpc === null) return;
  rpc = null;
  if (view) view.close?.();
  view = null;
  clear(app).append(h("div", { class: "disconnected" }, h("p", {}, "The connection to the server closed."),
    h("button", { class: "send", onclick: connect }, "Reconnect")));
}

function openThread(threadId, firstPrompt = "") {
  pendingPrompt = firstPrompt;
  location.hash = `#/thread/${encodeURIComponent(threadId)}`;
}

let pendingPrompt = "";

async function route() {
  if (rpc === null) return;
  const root = document.getElementById("view");
  if (view) view.close();
  const match = /^#\/thread\/(.+)$/.exec(location.hash);
  view = match ? new ThreadView(rpc, decodeURIComponent(match[1]), root) : new SessionsView(rpc, root, openThread);
  const opening = view;
  try {
    await opening.open();
    if (match && pendingPrompt && opening === view) {
      const prompt = pendingPrompt;
      pendingPrompt = "";
      await opening.send(prompt);
    }
  } catch (error) {
    if (opening === view) clear(root).append(h("p", { class: "problem" }, error.message));
  }
}

window.addEventListener("hashchange", route);
tokenFromAddress();
connect();
