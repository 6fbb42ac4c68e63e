// A unified diff as lines coloured by what they do (added, removed, hunk, file header).
import { h } from "./dom.js";

export function lineKind(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("diff ") || line.startsWith("index ") || line.startsWith("*** ")) return "file";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "same";
}

export function renderDiff(text) {
  const lines = text.replace(/\n$/, "").split("\n");
  return h("pre", { class: "diff" }, lines.map((line) => h("span", { class: `line ${lineKind(line)}` }, line + "\n")));
}

export function looksLikeDiff(text) {
  return /^(diff --git |--- |\+\+\+ |@@ )/m.test(text) && /^@@ /m.test(text);
}
