// The sessions: live ones (loaded in the server) first, then the saved ones, each with its
// title, folder, status, tokens and cost; and the form that starts a new one in a folder.
import { h, clear, statusOf, tokensText, costText, ago, shortFolder } from "./dom.js";

const LIFECYCLE = ["thread/started", "thread/status/changed", "thread/closed", "thread/name/updated",
  "thread/archived", "thread/unarchived"];
const USAGE_ROWS = 20; // rows whose tokens and cost are asked for (a saved session is read from disk)

export class SessionsView {
  constructor(rpc, root, openThread) {
    this.rpc = rpc;
    this.root = root;
    this.openThread = openThread;
    this.unlisten = [];
    this.usage = new Map(); // thread id -> {tokens, cost}
    this.timer = null;
  }

  async open() {
    this.list = h("ul", { class: "sessions", "aria-label": "sessions" });
    this.form = this.newSessionForm();
    clear(this.root).append(
      h("div", { class: "list-head" }, h("h1", {}, "Sessions"),
        h("button", { class: "new", onclick: () => this.toggleForm() }, "New session")),
      this.form, this.list);
    for (const method of LIFECYCLE) this.unlisten.push(this.rpc.on(method, () => this.refreshSoon()));
    const [hooks] = await Promise.all([this.rpc.request("hooks/list", {}).catch(() => null), this.refresh()]);
    this.defaultFolder = hooks?.data?.[0]?.cwd || "";
    this.folder.value ||= this.defaultFolder;
    this.fillFolders();
  }

  refreshSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 150);
  }

  async refresh() {
    const [listed, loaded] = await Promise.all([
      this.rpc.request("thread/list", { limit: 50 }),
      this.rpc.request("thread/loaded/list", {}).catch(() => ({ data: [] })),
    ]);
    const known = new Set(listed.data.map((thread) => thread.id));
    const unlisted = loaded.data.filter((id) => !known.has(id)); // loaded, not on the first page (or not saved yet)
    const read = await Promise.all(unlisted.map((threadId) =>
      this.rpc.request("thread/read", { threadId }).then((answer) => answer.thread, () => null)));
    const threads = [...listed.data, ...read.filter(Boolean)];
    const live = threads.filter((thread) => thread.status?.type !== "notLoaded");
    const saved = threads.filter((thread) => thread.status?.type === "notLoaded");
    this.threads = [...live, ...saved];
    clear(this.list);
    if (!this.threads.length) this.list.append(h("li", { class: "empty" }, "No sessions yet: start one."));
    for (const thread of this.threads) this.list.append(this.row(thread));
    this.fillFolders();
    for (const thread of this.threads.slice(0, USAGE_ROWS)) {
      if (this.closed) return;
      const settled = thread.status?.type === "notLoaded" && this.usage.has(thread.id); // a saved session's figures stay
      if (!settled) await this.loadUsage(thread);
    }
  }

  row(thread) {
    const status = statusOf(thread.status);
    const usage = h("span", { class: "usage", "data-usage": thread.id });
    this.showUsage(usage, this.usage.get(thread.id));
    const title = thread.name || thread.preview || "New session";
    return h("li", { class: `session ${status.key}` },
      h("a", { href: `#/thread/${encodeURIComponent(thread.id)}`, onclick: (event) => { event.preventDefault(); this.openThread(thread.id); } },
        h("div", { class: "row-top" }, h("span", { class: "title" }, title), h("span", { class: `status ${status.key}` }, status.label)),
        h("div", { class: "row-meta" },
          h("span", { class: "folder", title: thread.cwd }, shortFolder(thread.cwd)),
          h("span", { class: "when" }, ago(thread.updatedAt)), usage)));
  }

  async loadUsage(thread) {
    try {
      const read = await this.rpc.request("account/usage/read", { threadId: thread.id });
      const usage = read.threadUsage;
      if (!usage) return;
      const shown = {
        tokens: usage.groups.reduce((sum, group) => sum + (group.totalTokens || 0), 0),
        cost: usage.estimatedUsageUsdMicros,
      };
      this.usage.set(thread.id, shown);
      const node = this.list.querySelector(`[data-usage="${CSS.escape(thread.id)}"]`);
      if (node) this.showUsage(node, shown);
    } catch {
      // a session file that cannot be read: no figures, the row stays
    }
  }

  showUsage(node, usage) {
    node.textContent = usage ? [tokensText(usage.tokens), costText(usage.cost)].filter(Boolean).join(" · ") : "";
  }

  newSessionForm() {
    this.folder = h("input", { class: "folder-input", name: "folder", list: "folders", autocomplete: "off",
      spellcheck: "false", "aria-label": "folder", placeholder: "/path/to/a/repository" });
    this.folders = h("datalist", { id: "folders" });
    this.firstPrompt = h("textarea", { class: "prompt", name: "prompt", rows: 3, "aria-label": "first prompt",
      placeholder: "What should it do? (optional)" });
    this.formProblem = h("div", { class: "problem", hidden: true });
    return h("form", { class: "new-session", hidden: true, onsubmit: (event) => { event.preventDefault(); this.start(); } },
      h("label", {}, "Folder", this.folder), this.folders,
      h("label", {}, "Prompt", this.firstPrompt), this.formProblem,
      h("div", { class: "composer-buttons" }, h("button", { type: "submit", class: "send" }, "Start")));
  }

  toggleForm() {
    this.form.hidden = !this.form.hidden;
    if (!this.form.hidden) this.folder.focus();
  }

  fillFolders() {
    const known = new Set([this.defaultFolder, ...(this.threads || []).map((thread) => thread.cwd)].filter(Boolean));
    clear(this.folders).append([...known].map((folder) => h("option", { value: folder })));
  }

  async start() {
    this.formProblem.hidden = true;
    try {
      const started = await this.rpc.request("thread/start", { cwd: this.folder.value.trim() || null });
      this.openThread(started.thread.id, this.firstPrompt.value.trim()); // the view sends it once it listens
    } catch (error) {
      this.formProblem.textContent = error.message;
      this.formProblem.hidden = false;
    }
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    for (const stop of this.unlisten) stop();
  }
}
