// One record: its state, fields, attribution, history, its last readers, a diff between any two versions, and its actions.

import { enc, get, query } from "./api.js";
import { badge, clear, h, short, when } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { actionsFor } from "./actions.js";

const SHOWN = ["status", "priority", "assignee", "due", "hard", "remind_days", "expected", "waits_on",
  "blocked_reason", "blocked_by", "blocks", "parent_task", "service", "severity", "hosts", "detection", "started_at", "detected_at",
  "mitigated_at", "resolved_at", "resolution", "knowledge", "tags", "refs"];

function value(v) {
  if (Array.isArray(v)) return v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(", ");
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

export function renderDiff(data) {
  if (!data.changed) return h("p", { class: "dim", id: "diff-none" }, "no change between these versions");
  const lines = data.diff.split("\n").filter((l, i, all) => i < all.length - 1 || l !== "");
  return h("div", {},
    h("p", { class: "fields-changed" },
      data.fields.length ? ["fields changed: ", data.fields.map((f, i) => [i ? ", " : "", h("strong", {}, f.field)])]
        : "no field changed", data.body_changed ? " · body changed" : " · body unchanged"),
    h("pre", { class: "diff", id: "diff" }, lines.map((line) => h("span", {
      class: line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk"
        : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "",
    }, line || " "))));
}

export async function recordView(pane, ctx, key, at) {
  clear(pane, h("p", { class: "dim" }, `loading ${key}…`));
  let rec;
  let hist;
  try {
    [rec, hist] = await Promise.all([get(`/knowledge/${enc(key)}` + query({ at })), get(`/knowledge/${enc(key)}/history`)]);
  } catch (err) {
    clear(pane, h("div", { class: "record" }, h("h1", {}, key),
      h("p", { class: "notice", id: "record-error" }, `${err.status}: ${err.message}`)));
    return;
  }
  // receipts (issue 40): who read it lately; an audit aid told by the clients' own labels, never fatal
  const readers = await get("/reads" + query({ key, limit: 5 })).catch(() => null);
  const versions = hist.versions;
  const latest = versions[0];
  // a side version a sync merge did not keep (lost_merge) is never the "before" of the kept one
  const content = versions.filter((v) => v.change !== "deleted" && (!v.lost_merge || v.sha === rec.sha));
  const fields = SHOWN.filter((n) => n in rec && rec[n] !== "" && rec[n] !== null && rec[n] !== false
    && !(Array.isArray(rec[n]) && !rec[n].length));
  const extra = rec.extra ? Object.entries(rec.extra) : [];

  const diffBox = h("div", { id: "diff-box" });
  // default diff: the shown version against the one before it (the latest and its predecessor)
  const shownAt = Math.max(0, content.findIndex((v) => v.sha === rec.sha));
  let pickTo = content[shownAt] ? content[shownAt].sha : null;
  let pickFrom = content[shownAt + 1] ? content[shownAt + 1].sha : null;
  const writer = versions.find((v) => v.sha === rec.sha) || latest;

  async function showDiff() {
    if (!pickTo) return;
    clear(diffBox, h("p", { class: "dim" }, "comparing…"));
    try {
      const data = await get(`/knowledge/${enc(key)}/diff` + query({ from: pickFrom, to: pickTo }));
      clear(diffBox, h("p", { class: "meta-line" },
        data.from ? `${short(data.from.sha)} (${when(data.from.committed_at)})` : "nothing", " → ",
        `${short(data.to.sha)} (${when(data.to.committed_at)})`), renderDiff(data));
    } catch (err) {
      clear(diffBox, h("p", { class: "notice" }, `${err.status}: ${err.message}`));
    }
  }

  const table = h("table", { class: "grid versions", id: "versions" },
    h("thead", {}, h("tr", {}, h("th", {}, "from"), h("th", {}, "to"), h("th", {}, "version"), h("th", {}, "change"),
      h("th", {}, "who"))),
    h("tbody", {}, versions.map((v) => {
      const pickable = v.change !== "deleted";
      return h("tr", { "data-sha": v.sha, class: v.lost_merge ? "lost" : (v.current ? "current" : "") },
        h("td", { class: "pick" }, pickable ? h("input", {
          type: "radio", name: "diff-from", value: v.sha, checked: v.sha === pickFrom,
          "aria-label": `diff from ${short(v.sha)}`, onchange: () => { pickFrom = v.sha; showDiff(); },
        }) : null),
        h("td", { class: "pick" }, pickable ? h("input", {
          type: "radio", name: "diff-to", value: v.sha, checked: v.sha === pickTo,
          "aria-label": `diff to ${short(v.sha)}`, onchange: () => { pickTo = v.sha; showDiff(); },
        }) : null),
        h("td", { class: "mono" }, h("button", {
          type: "button", class: "link", title: "show this version",
          onclick: () => ctx.open(key, v.sha === latest.sha && rec.is_head ? null : v.sha),
        }, short(v.sha)), h("div", { class: "dim" }, when(v.committed_at))),
        h("td", {}, v.change, v.current ? h("span", { class: "badge current" }, " current") : null,
          v.lost_merge ? h("div", { class: "dim lost" }, `lost the merge ${short(v.lost_merge)}`) : null,
          v.reason ? h("div", { class: "dim" }, v.reason) : null),
        h("td", {}, `${v.agent || "?"}`, h("div", { class: "dim" }, [v.transport, v.session].filter(Boolean).join(" · "))));
    })));

  clear(pane, h("article", { class: "record", id: "record", "data-key": key },
    h("h1", {}, rec.title),
    h("div", { class: "ident" }, h("span", {}, rec.key), h("span", {}, rec.kind), badge(rec.state),
      rec.is_head ? null : badge("past version", "past")),
    rec.is_head ? null : h("p", { class: "notice" }, "An older version, not the current one. ",
      h("button", { type: "button", class: "secondary", onclick: () => ctx.open(key, null) }, "Show current")),
    rec.state === "archived" ? h("p", { class: "notice" }, `Closed and archived ${when(rec.archived_at)}.`) : null,
    h("dl", {},
      h("dt", {}, "version"), h("dd", { class: "mono" }, `${short(rec.sha)} · ${when(rec.committed_at)}`),
      h("dt", {}, "written by"), h("dd", { id: "written-by" }, `${writer.agent || "?"} via ${writer.transport || "?"}`,
        writer.session ? ` (session ${writer.session})` : "", writer.author ? ` · ${writer.author}` : ""),
      fields.map((n) => [h("dt", {}, n.replace(/_/g, " ")), h("dd", {}, value(rec[n]))]),
      extra.map(([n, v]) => [h("dt", {}, n), h("dd", {}, value(v))])),
    rec.body ? renderMarkdown(rec.body) : h("p", { class: "dim" }, "(no body)"),
    actionsFor(rec, ctx),
    h("section", {}, h("h2", {}, `History (${versions.length})`), table),
    readers ? h("section", { id: "readers" }, h("h2", {}, "Last readers"), readers.reads.length
      ? h("ul", {}, readers.reads.map((r) => h("li", {}, `${r.agent} via ${r.transport} (${r.mode}) read `,
        h("span", { class: "mono" }, short(r.sha)), ` · ${when(r.at)}`, r.session ? ` · session ${r.session}` : "")))
      : h("p", { class: "dim" }, "nobody yet (reads are kept on this machine only)")) : null,
    h("section", {}, h("h2", {}, "Diff"), content.length > 1 || content.length === 1 ? diffBox : null)));
  showDiff();
}
