// One session: its history from thread/resume, then its turns live (items, deltas, plan,
// approvals, tokens), a composer that starts, steers and interrupts turns.
import { h, clear, statusOf, tokensText, costText, shortFolder } from "./dom.js";
import { itemView, planView } from "./items.js";
import { approvalCard, APPROVALS, ELICITATION } from "./approvals.js";

export class ThreadView {
  constructor(rpc, threadId, root) {
    this.rpc = rpc;
    this.id = threadId;
    this.root = root;
    this.items = new Map(); // item id -> view
    this.turns = new Map(); // turn id -> its container
    this.cards = new Map(); // server request id -> approval card
    this.running = null; // the running turn's id
    this.unlisten = [];
  }

  async open() {
    clear(this.root).append(h("div", { class: "loading" }, "Opening the session…"));
    const opened = await this.rpc.request("thread/resume", { threadId: this.id });
    this.thread = opened.thread;
    this.id = opened.thread.id;
    this.build(opened);
    for (const turn of opened.thread.turns || []) {
      const container = this.turnContainer(turn.id);
      for (const item of turn.items || []) this.showItem(item, container);
      this.turnEnded(turn);
    }
    this.listen();
    this.refreshUsage();
    this.scroll(true);
  }

  build(opened) {
    this.title = h("h1", { class: "title" }, opened.thread.name || opened.thread.preview || "New session");
    this.status = h("span", { class: "status" });
    this.usage = h("span", { class: "usage" });
    this.log = h("div", { class: "transcript" });
    this.input = h("textarea", { class: "prompt", rows: 2, placeholder: "Ask, or tell it what to do", "aria-label": "prompt" });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && window.matchMedia("(pointer: fine)").matches) {
        event.preventDefault();
        this.send();
      }
    });
    this.sendButton = h("button", { class: "send", onclick: () => this.send() }, "Send");
    this.stopButton = h("button", { class: "stop", onclick: () => this.interrupt(), hidden: true }, "Stop");
    this.problem = h("div", { class: "problem", hidden: true });
    this.setStatus(opened.thread.status);
    clear(this.root).append(
      h("header", { class: "thread-head" }, this.title,
        h("div", { class: "meta" }, h("span", { class: "folder", title: opened.cwd }, shortFolder(opened.cwd)),
          h("span", { class: "model" }, opened.model || ""), this.status, this.usage)),
      this.log,
      h("form", { class: "composer", onsubmit: (event) => { event.preventDefault(); this.send(); } },
        this.problem, this.input, h("div", { class: "composer-buttons" }, this.stopButton, this.sendButton)));
  }

  listen() {
    const mine = (handler) => (params, method) => { if (params.threadId === this.id) handler(params, method); };
    const on = (method, handler) => this.unlisten.push(this.rpc.on(method, mine(handler)));
    on("turn/started", ({ turn }) => { this.running = turn.id; this.turnContainer(turn.id); this.setRunning(true); });
    on("turn/completed", ({ turn }) => { this.turnEnded(turn); this.refreshUsage(); });
    on("item/started", ({ item, turnId }) => this.showItem(item, this.turnContainer(turnId)));
    on("item/completed", ({ item, turnId }) => {
      const view = this.items.get(item.id);
      if (view) view.complete(item);
      else this.showItem(item, this.turnContainer(turnId));
      this.scroll();
    });
    for (const method of ["item/agentMessage/delta", "item/commandExecution/outputDelta", "item/reasoning/summaryTextDelta"]) {
      on(method, ({ itemId, delta }) => { this.items.get(itemId)?.delta(delta); this.scroll(); });
    }
    on("turn/plan/updated", ({ turnId, plan, explanation }) => {
      const container = this.turnContainer(turnId);
      container.querySelector(".plan")?.remove();
      container.prepend(planView(plan || [], explanation));
    });
    on("thread/tokenUsage/updated", ({ tokenUsage }) => { this.tokens = tokenUsage.total.totalTokens; this.showUsage(); });
    on("error", ({ error, willRetry }) => this.note(error.message, willRetry ? "warning" : "error"));
    on("warning", ({ message }) => this.note(message, "warning"));
    on("thread/status/changed", ({ status }) => this.setStatus(status));
    on("thread/name/updated", ({ threadName }) => { if (threadName) this.title.textContent = threadName; });
    on("serverRequest/resolved", ({ requestId }) => this.cards.get(requestId)?.resolved());
    on("thread/closed", () => this.setStatus({ type: "notLoaded" }));
    this.rpc.onServerRequest = (request) => this.question(request);
  }

  question(request) {
    const known = APPROVALS.includes(request.method) || request.method === ELICITATION;
    if (!known || request.params?.threadId !== this.id) return; // left for a client that can answer it
    const card = approvalCard(request, (result) => this.rpc.respond(request.id, result));
    this.cards.set(request.id, card);
    const container = request.params.turnId ? this.turnContainer(request.params.turnId) : this.log;
    container.append(card.node);
    this.scroll(true);
  }

  turnContainer(turnId) {
    if (!this.turns.has(turnId)) {
      const container = h("section", { class: "turn", "data-turn": turnId });
      this.turns.set(turnId, container);
      this.log.append(container);
    }
    return this.turns.get(turnId);
  }

  showItem(item, container) {
    if (this.items.has(item.id)) return;
    if (item.type === "userMessage" && this.title.textContent === "New session") {
      this.title.textContent = (item.content || []).map((part) => part.text || "").join(" ").slice(0, 120);
    }
    const view = itemView(item);
    if (item.status && item.status !== "inProgress") view.complete(item);
    this.items.set(item.id, view);
    container.append(view.node);
    this.scroll();
  }

  turnEnded(turn) {
    if (turn.id === this.running) { this.running = null; this.setRunning(false); }
    const container = this.turnContainer(turn.id);
    if (turn.status === "interrupted") container.append(h("div", { class: "note" }, "Interrupted"));
    if (turn.status === "failed" && turn.error) container.append(h("div", { class: "note error" }, turn.error.message));
    for (const card of container.querySelectorAll(".approval:not(.closed) .choices")) {
      clear(card).append(h("span", { class: "answered" }, "No longer asked"));
    }
  }

  note(text, kind) {
    const container = this.running ? this.turnContainer(this.running) : this.log;
    container.append(h("div", { class: `note ${kind}` }, text));
    this.scroll();
  }

  setStatus(status) {
    const shown = statusOf(status);
    this.status.className = `status ${shown.key}`;
    this.status.textContent = shown.label;
    if (status?.type === "active" && !this.running) this.setRunning(true);
    if (status?.type === "idle" && this.running === null) this.setRunning(false);
  }

  setRunning(running) {
    this.stopButton.hidden = !running;
    this.sendButton.textContent = running ? "Steer" : "Send";
  }

  async send(given = null) {
    const text = given ?? this.input.value.trim();
    if (!text) return;
    this.problem.hidden = true;
    const input = [{ type: "text", text, text_elements: [] }];
    try {
      if (this.running) await this.rpc.request("turn/steer", { threadId: this.id, input, expectedTurnId: this.running });
      else this.running = (await this.rpc.request("turn/start", { threadId: this.id, input })).turn.id;
      if (given === null) this.input.value = "";
      this.setRunning(true);
    } catch (error) {
      this.problem.textContent = error.message;
      this.problem.hidden = false;
    }
  }

  interrupt() {
    this.rpc.request("turn/interrupt", { threadId: this.id, turnId: this.running }).catch(() => {});
  }

  async refreshUsage() {
    try {
      const read = await this.rpc.request("account/usage/read", { threadId: this.id });
      const usage = read.threadUsage;
      if (!usage) return;
      this.tokens = usage.groups.reduce((sum, group) => sum + (group.totalTokens || 0), 0);
      this.cost = usage.estimatedUsageUsdMicros;
      this.showUsage();
    } catch {
      // an older server without account/usage/read: the token count from the turns stays
    }
  }

  showUsage() {
    this.usage.textContent = [tokensText(this.tokens), costText(this.cost)].filter(Boolean).join(" · ");
  }

  scroll(force = false) {
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 160;
    if (force || nearBottom) requestAnimationFrame(() => window.scrollTo(0, document.body.scrollHeight));
  }

  close() {
    for (const stop of this.unlisten) stop();
    this.rpc.onServerRequest = () => {};
    this.rpc.request("thread/unsubscribe", { threadId: this.id }).catch(() => {});
  }
}
