// Record bodies as Markdown, safely: every piece is built with h() (text is always text), so no raw
// HTML from a record ever reaches the page; links keep only http(s), mailto and relative targets.
// Headings, paragraphs, lists, block quotes, fenced code, inline code, bold, italic and links.
import { h } from "./dom.js";

const SAFE_HREF = /^(https?:|mailto:|[^:]*$)/i;

export function inline(text) {
  const out = [];
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const t = m[0];
    if (m[1]) out.push(h("code", {}, t.slice(1, -1)));
    else if (m[2]) out.push(h("strong", {}, inline(t.slice(2, -2))));
    else if (m[3]) out.push(h("em", {}, inline(t.slice(1, -1))));
    else {
      const label = t.slice(1, t.indexOf("]("));
      const href = t.slice(t.indexOf("](") + 2, -1);
      out.push(SAFE_HREF.test(href) ? h("a", { href, rel: "noopener noreferrer", target: "_blank" }, label) : label);
    }
    last = m.index + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function renderMarkdown(src) {
  const lines = String(src || "").replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) {
      const fence = line.trim().slice(0, 3);
      const code = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
      i += 1;
      blocks.push(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const head = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (head) {
      blocks.push(h(`h${Math.min(6, head[1].length + 2)}`, {}, inline(head[2])));
      i += 1;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items = [];
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        items.push(h("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i += 1;
      }
      blocks.push(h(ordered ? "ol" : "ul", {}, items));
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quote = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quote.push(lines[i++].replace(/^\s*>\s?/, ""));
      blocks.push(h("blockquote", {}, renderMarkdown(quote.join("\n"))));
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])) {
      para.push(lines[i++]);
    }
    if (!para.length) para.push(lines[i++]);
    blocks.push(h("p", {}, inline(para.join(" "))));
  }
  return h("div", { class: "markdown body", id: "body" }, blocks);
}

// The snippet with the question's words marked (a word matches one starting with its first five
// letters, the rule of the server's snippets).
export function highlight(text, q) {
  const words = String(q || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
  const stems = words.map((w) => w.slice(0, 5));
  if (!stems.length) return [text];
  return String(text).split(/([\p{L}\p{N}]+)/u).map((part) => {
    const low = part.toLowerCase();
    return stems.some((s) => s && low.startsWith(s) && (s.length >= 5 || low === s)) ? h("mark", {}, part) : part;
  });
}
