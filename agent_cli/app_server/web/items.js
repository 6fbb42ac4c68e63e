// One ThreadItem of Codex's protocol as a block of the transcript, updated in place as its
// deltas stream in and when it completes.
import { h, clear } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { renderDiff } from "./diff.js";

const STATUS = { inProgress: "running", completed: "done", failed: "failed", declined: "declined" };

export function itemView(item) {
  const make = VIEWS[item.type] || other;
  return make(item);
}

function badge(status) {
  return h("span", { class: `badge ${status || ""}` }, STATUS[status] || status || "");
}

function userMessage(item) {
  const text = (item.content || []).filter((part) => part.type === "text").map((part) => part.text).join("\n");
  return { node: h("div", { class: "msg user" }, text), delta() {}, complete() {} };
}

function agentMessage(item) {
  const body = h("div", { class: "markdown" });
  const node = h("div", { class: "msg agent" }, body);
  let text = item.text || "";
  let scheduled = false;
  const render = () => { scheduled = false; clear(body).append(renderMarkdown(text)); };
  render();
  return {
    node,
    delta(more) {
      text += more;
      if (!scheduled) { scheduled = true; requestAnimationFrame(render); }
    },
    complete(done) { text = done.text ?? text; render(); },
  };
}

function reasoning(item) {
  const body = h("div", { class: "thinking" }, (item.summary || []).join("\n"));
  const node = h("details", { class: "reasoning" }, h("summary", {}, "Thinking"), body);
  return {
    node,
    delta(more) { body.append(more); },
    complete(done) { clear(body).append((done.summary || []).join("\n")); },
  };
}

function commandExecution(item) {
  const status = badge(item.status);
  const output = h("pre", { class: "output" }, item.aggregatedOutput || "");
  const exit = h("span", { class: "exit" });
  const node = h("div", { class: "tool command", "data-item": item.id },
    h("div", { class: "tool-head" }, h("code", { class: "cmd" }, "$ " + item.command), status),
    output, exit);
  return {
    node,
    delta(more) { output.append(more); output.scrollTop = output.scrollHeight; },
    complete(done) {
      status.replaceWith(badge(done.status));
      if (done.aggregatedOutput !== undefined && done.aggregatedOutput !== null) clear(output).append(done.aggregatedOutput);
      if (done.exitCode !== null && done.exitCode !== undefined) exit.textContent = `exit code ${done.exitCode}`;
    },
  };
}

function fileChange(item) {
  const status = badge(item.status);
  const files = h("div", { class: "files" });
  const show = (changes) => {
    clear(files);
    for (const change of changes || []) {
      const kind = change.kind?.type || "update";
      files.append(h("div", { class: "file" }, h("div", { class: "path" }, `${kind} ${change.path}`),
        change.diff ? renderDiff(change.diff) : null));
    }
  };
  show(item.changes);
  const node = h("div", { class: "tool patch" }, h("div", { class: "tool-head" }, h("span", {}, "Edit files"), status), files);
  return { node, delta() {}, complete(done) { status.replaceWith(badge(done.status)); show(done.changes); } };
}

function toolCall(item) {
  const name = item.type === "mcpToolCall" ? `${item.server}.${item.tool}` : item.tool;
  const status = badge(item.status);
  const result = h("pre", { class: "output" });
  const node = h("details", { class: "tool call" },
    h("summary", {}, h("code", {}, `${name}(${summarize(item.arguments)})`), " ", status), result);
  return {
    node,
    delta() {},
    complete(done) {
      status.replaceWith(badge(done.status));
      const texts = (done.contentItems || done.result?.content || []).map((part) => part.text || "").join("\n");
      result.textContent = texts || done.error?.message || "";
    },
  };
}

function summarize(args) {
  if (!args || typeof args !== "object") return "";
  const text = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(", ");
  return text.length > 120 ? text.slice(0, 117) + "…" : text;
}

function simple(text, className = "note") {
  return () => ({ node: h("div", { class: className }, text), delta() {}, complete() {} });
}

function webSearch(item) {
  return simple(`Searched the web: ${item.query || ""}`)();
}

function review(item) {
  const node = h("div", { class: "msg agent review" }, h("div", { class: "markdown" }, renderMarkdown(item.review || "")));
  return { node, delta() {}, complete() {} };
}

function other(item) {
  return simple(`${item.type}`)();
}

const VIEWS = {
  userMessage,
  agentMessage,
  reasoning,
  commandExecution,
  fileChange,
  mcpToolCall: toolCall,
  dynamicToolCall: toolCall,
  webSearch,
  contextCompaction: simple("Context compacted"),
  enteredReviewMode: (item) => simple(`Review: ${item.review || ""}`)(),
  exitedReviewMode: review,
};

export function planView(plan, explanation) {
  return h("div", { class: "plan" }, h("div", { class: "plan-head" }, "Plan"),
    explanation ? h("div", { class: "note" }, explanation) : null,
    h("ol", {}, plan.map((step) => h("li", { class: step.status }, step.step))));
}
