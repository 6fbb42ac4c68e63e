// A question the turn asks (Codex's server requests): Allow / Allow for the session / Deny for a
// command or a patch; an MCP server's form can only be declined here. The first answer from any
// client wins: the others hear serverRequest/resolved and the card closes.
import { h, clear } from "./dom.js";
import { renderDiff } from "./diff.js";

export const APPROVALS = ["item/commandExecution/requestApproval", "item/fileChange/requestApproval"];
export const ELICITATION = "mcpServer/elicitation/request";

export function approvalCard(request, answer) {
  const params = request.params || {};
  const buttons = h("div", { class: "choices" });
  const card = h("div", { class: "approval", "data-request": String(request.id) });
  const done = (label) => { clear(buttons).append(h("span", { class: "answered" }, label)); card.classList.add("closed"); };
  const choose = (label, result) => () => { answer(result); done(label); };
  if (request.method === ELICITATION) {
    card.append(h("div", { class: "question" }, `${params.serverName || "An MCP server"} asks:`),
      h("div", { class: "detail" }, params.message || ""));
    buttons.append(
      h("button", { class: "deny", onclick: choose("Declined", { action: "decline", content: null }) }, "Decline"),
      h("button", { class: "deny", onclick: choose("Cancelled", { action: "cancel", content: null }) }, "Cancel"));
  } else {
    const isPatch = request.method === "item/fileChange/requestApproval";
    card.append(h("div", { class: "question" }, isPatch ? "Apply these changes?" : "Run this command?"));
    if (params.command) card.append(h("pre", { class: "cmd" }, params.command));
    if (params.cwd) card.append(h("div", { class: "detail" }, `in ${params.cwd}`));
    if (params.reason) card.append(h("div", { class: "detail" }, params.reason));
    for (const change of params.changes || []) if (change.diff) card.append(renderDiff(change.diff));
    buttons.append(
      h("button", { class: "allow", onclick: choose("Allowed", { decision: "accept" }) }, "Allow"),
      h("button", { class: "allow-session", onclick: choose("Allowed for the session", { decision: "acceptForSession" }) },
        "Allow for the session"),
      h("button", { class: "deny", onclick: choose("Denied", { decision: "decline" }) }, "Deny"));
  }
  card.append(buttons);
  return { node: card, resolved: () => { if (!card.classList.contains("closed")) done("Answered elsewhere"); } };
}
