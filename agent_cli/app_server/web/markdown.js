// Markdown as DOM nodes (headings, paragraphs, lists, quotes, tables, code, diffs, emphasis,
// links). Every piece of text becomes a text node: a model that writes <script> or
// <img onerror=...> gets those characters shown, never run. Links keep http(s) and mailto only.
import { h } from "./dom.js";
import { renderDiff, looksLikeDiff } from "./diff.js";

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const SAFE_LINK = /^(https?:|mailto:)/i;

export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  for (const block of blocks(text.replace(/\r\n?/g, "\n").split("\n"))) fragment.append(block);
  return fragment;
}

function startsBlock(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    LIST_ITEM.test(line) || (line.includes("|") && next !== undefined && TABLE_RULE.test(next) && next.includes("-"));
}

function blocks(lines) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    let match;
    if ((match = FENCE.exec(line))) {
      const fence = match[1];
      const language = match[2].toLowerCase();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++; // the closing fence (a streamed answer may not have it yet)
      out.push(codeBlock(body.join("\n"), language));
    } else if ((match = HEADING.exec(line))) {
      out.push(h(`h${Math.min(match[1].length + 2, 6)}`, {}, inline(match[2])));
      i++;
    } else if (RULE.test(line)) {
      out.push(h("hr"));
      i++;
    } else if (QUOTE.test(line)) {
      const quoted = [];
      while (i < lines.length && (match = QUOTE.exec(lines[i]))) { quoted.push(match[1]); i++; }
      out.push(h("blockquote", {}, blocks(quoted)));
    } else if (LIST_ITEM.test(line)) {
      const taken = listLines(lines, i);
      out.push(list(taken));
      i += taken.length;
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const rows = [line];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(lines[i++]);
      out.push(table(rows));
    } else {
      const paragraph = [line];
      i++;
      while (i < lines.length && lines[i].trim() && !startsBlock(lines[i], lines[i + 1])) paragraph.push(lines[i++]);
      out.push(h("p", {}, inline(paragraph.join("\n"))));
    }
  }
  return out;
}

function codeBlock(code, language) {
  if (language === "diff" || language === "patch" || (!language && looksLikeDiff(code))) return renderDiff(code);
  return h("pre", { class: "code" }, h("code", { "data-language": language || null }, code));
}

// A list starting at lines[start]: its items and their indented continuation lines.
function listLines(lines, start) {
  const indent = LIST_ITEM.exec(lines[start])[1].length;
  const taken = [];
  for (let i = start; i < lines.length; i++) {
    const line = lines[i];
    const item = LIST_ITEM.exec(line);
    if (item && item[1].length <= indent + 1) { taken.push(line); continue; }
    if (line.trim() && /^\s+/.test(line) && line.search(/\S/) > indent) { taken.push(line); continue; }
    if (!line.trim() && i + 1 < lines.length && (LIST_ITEM.test(lines[i + 1]) || /^\s{2,}\S/.test(lines[i + 1]))) {
      taken.push(line);
      continue;
    }
    break;
  }
  return taken;
}

function list(lines) {
  const first = LIST_ITEM.exec(lines[0]);
  const ordered = /\d/.test(first[2]);
  const indent = first[1].length;
  const node = h(ordered ? "ol" : "ul", { start: ordered && parseInt(first[2], 10) !== 1 ? parseInt(first[2], 10) : null });
  let content = null;
  const flush = () => {
    if (content === null) return;
    const nested = content.slice(1).some((l) => l.trim());
    node.append(h("li", {}, nested ? blocks(content) : inline(content[0])));
  };
  for (const line of lines) {
    const item = LIST_ITEM.exec(line);
    if (item && item[1].length <= indent + 1) {
      flush();
      content = [item[3]];
    } else if (content !== null) {
      content.push(line.slice(Math.min(line.search(/\S|$/), indent + 2)));
    }
  }
  flush();
  return node;
}

function cells(row) {
  return row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

function table(rows) {
  const [head, ...body] = rows;
  return h("div", { class: "table" }, h("table", {},
    h("thead", {}, h("tr", {}, cells(head).map((cell) => h("th", {}, inline(cell))))),
    h("tbody", {}, body.map((row) => h("tr", {}, cells(row).map((cell) => h("td", {}, inline(cell))))))));
}

const INLINE = [
  { pattern: /`([^`\n]+)`/, make: (m) => h("code", {}, m[1]) },
  { pattern: /\*\*(?=\S)([\s\S]+?)\*\*/, make: (m) => h("strong", {}, inline(m[1])) },
  { pattern: /__(?=\S)([\s\S]+?)__/, make: (m) => h("strong", {}, inline(m[1])) },
  { pattern: /~~(?=\S)([\s\S]+?)~~/, make: (m) => h("del", {}, inline(m[1])) },
  { pattern: /\[([^\]\n]+)\]\(([^)\s]+)\)/, make: (m) => link(m[1], m[2]) },
  { pattern: /<(https?:\/\/[^>\s]+)>/, make: (m) => link(m[1], m[1]) },
  { pattern: /\bhttps?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/, make: (m) => link(m[0], m[0]) },
  { pattern: /\*(?=\S)([^*\n]+?)\*/, make: (m) => h("em", {}, inline(m[1])) },
  { pattern: /(?<![\w])_(?=\S)([^_\n]+?)_(?![\w])/, make: (m) => h("em", {}, inline(m[1])) },
];

function link(text, href) {
  if (!SAFE_LINK.test(href)) return document.createTextNode(`${text} (${href})`);
  return h("a", { href, target: "_blank", rel: "noopener noreferrer" }, inline(text));
}

// Inline markdown: the earliest construct wins, the text around it stays text.
export function inline(text) {
  const out = [];
  let rest = text;
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      const match = rule.pattern.exec(rest);
      if (match && (best === null || match.index < best.match.index)) best = { rule, match };
    }
    if (best === null) { out.push(withBreaks(rest)); break; }
    if (best.match.index > 0) out.push(withBreaks(rest.slice(0, best.match.index)));
    out.push(best.rule.make(best.match));
    rest = rest.slice(best.match.index + best.match[0].length);
  }
  return out.flat();
}

function withBreaks(text) {
  const parts = text.split("\n");
  return parts.flatMap((part, index) => (index ? [h("br"), part] : [part]));
}
