// Building the page out of DOM nodes: text only ever goes in as text nodes, never as markup,
// so nothing a model, a command or a file name says can become HTML or a script.

export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function tokensText(count) {
  if (count === null || count === undefined) return "";
  if (count < 1000) return `${count} tokens`;
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k tokens`;
  return `${(count / 1_000_000).toFixed(1)}M tokens`;
}

export function costText(usdMicros) {
  if (usdMicros === null || usdMicros === undefined) return "";
  const dollars = usdMicros / 1_000_000;
  return dollars < 0.01 && dollars > 0 ? "<$0.01" : `$${dollars.toFixed(2)}`;
}

export function ago(epochSeconds) {
  if (!epochSeconds) return "";
  const seconds = Math.max(0, Date.now() / 1000 - epochSeconds);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

// The last two parts of a folder: enough to tell worktrees and repositories apart on a phone.
export function shortFolder(path) {
  if (!path) return "";
  const parts = path.split("/").filter(Boolean);
  return parts.length <= 2 ? path : "…/" + parts.slice(-2).join("/");
}

// A thread's status as the list and the header show it.
export function statusOf(status) {
  if (!status || status.type === "notLoaded") return { key: "stored", label: "saved" };
  if (status.type === "active") {
    const waiting = (status.activeFlags || []).includes("waitingOnApproval");
    return waiting ? { key: "waiting", label: "waiting for approval" } : { key: "running", label: "running" };
  }
  if (status.type === "systemError") return { key: "error", label: "error" };
  return { key: "idle", label: "idle" };
}
