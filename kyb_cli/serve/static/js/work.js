// The work views: the task queue (status, priority, assignee), tasks by date, incidents (open first, severity).

import { get, query } from "./api.js";
import { badge, clear, h } from "./dom.js";
import { newTaskForm } from "./actions.js";

const PAGE = 50;
const SEVERITY = { critical: 0, high: 1, medium: 2, low: 3 };
const INCIDENT_STATUS = { open: 0, mitigated: 1, resolved: 2 };

function today() {
  return new Date().toISOString().slice(0, 10);
}

// The first cell: the title as the link that opens the record, its key under it.
function titleCell(ctx, key, title) {
  return h("td", {}, h("button", { type: "button", class: "link row", onclick: () => ctx.open(key, null) }, title),
    h("div", { class: "row-key" }, key));
}

function moreButton(shown, total, onMore) {
  if (total < shown) return null;
  return h("button", { type: "button", class: "secondary more", onclick: onMore }, `Show ${PAGE} more`);
}

export function tasksView(pane, ctx) {
  const s = ctx.taskState;
  const status = h("select", { "aria-label": "Status", id: "task-status" },
    ["", "open", "in_progress", "blocked", "done", "dropped"].map((v) => h("option", { value: v, selected: s.status === v },
      v || "live statuses")));
  const priority = h("select", { "aria-label": "Priority", id: "task-priority" },
    ["", "critical", "high", "medium", "low"].map((v) => h("option", { value: v, selected: s.priority === v }, v || "any priority")));
  const assignee = h("input", { type: "text", "aria-label": "Assignee", id: "task-assignee", placeholder: "assignee",
    value: s.assignee });
  const all = h("input", { type: "checkbox", id: "task-all", checked: s.all });
  // the ready queue: open tasks none of whose blockers is still live (`kyb tasks --ready`), worked
  // out here from the live list itself
  const ready = h("input", { type: "checkbox", id: "task-ready", checked: s.ready });
  const body = h("div", { id: "task-list" });

  async function run() {
    let data;
    try {
      data = await get("/tasks" + query({ status: s.status, priority: s.priority, assignee: s.assignee.trim(),
        all: s.all ? "true" : "", limit: s.limit }));
    } catch (err) {
      clear(body, h("p", { class: "notice" }, `${err.status}: ${err.message}`));
      return;
    }
    const day = today();
    const live = new Set(data.tasks.filter((t) => !t.archived && !["done", "dropped"].includes(t.status)).map((t) => t.key));
    const rows = s.ready ? data.tasks.filter((t) => t.status === "open" && !t.archived
      && (t.blocked_by || []).every((b) => !live.has(b))) : data.tasks;
    clear(body, h("table", { class: "grid", id: "tasks" },
      h("thead", {}, h("tr", {}, ["task", "status", "priority", "assignee", "due", "blocked by"].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows.map((t) => h("tr", { "data-key": t.key, class: ctx.selected === t.key ? "selected" : "" },
        titleCell(ctx, t.key, t.title), h("td", { "data-label": "status" }, badge(t.status)),
        h("td", { "data-label": "priority" }, badge(t.priority)),
        h("td", { "data-label": "assignee" }, t.assignee),
        h("td", { "data-label": "due", class: `mono ${t.due && t.due < day && !t.archived ? "overdue-text" : ""}` },
          t.due || t.expected || "", t.hard ? [" ", h("span", { class: "hard" }, "HARD")] : null),
        h("td", { "data-label": "blocked by", class: "mono blocked-by" }, (t.blocked_by || []).join(", ")))))),
    rows.length ? null : h("p", { class: "dim" }, s.ready ? "no task is ready to start" : "no tasks"),
    moreButton(s.limit, data.count, () => { s.limit += PAGE; run(); }));
  }

  for (const [el, name] of [[status, "status"], [priority, "priority"]]) {
    el.addEventListener("change", () => { s[name] = el.value; s.limit = PAGE; run(); });
  }
  assignee.addEventListener("change", () => { s.assignee = assignee.value; s.limit = PAGE; run(); });
  all.addEventListener("change", () => { s.all = all.checked; s.limit = PAGE; run(); });
  ready.addEventListener("change", () => { s.ready = ready.checked; run(); });
  clear(pane, ctx.readonly ? null : newTaskForm(ctx),
    h("div", { class: "controls" }, status, priority, assignee, h("label", {}, all, " archived too"),
      h("label", { title: "open tasks none of whose blockers is still live" }, ready, " ready to start")), body);
  run();
  return { refresh: run };
}

export function datesView(pane, ctx) {
  const body = h("div", { id: "date-list" });

  async function run() {
    // every live task with a due date (the server filters, so 10k tasks cost one page), plus the
    // provisional (expected) dates among the most recent live tasks
    let due;
    let recent;
    try {
      [due, recent] = await Promise.all([get("/tasks" + query({ due_before: "9999-12-31", limit: 200 })),
        get("/tasks" + query({ limit: 200 }))]);
    } catch (err) {
      clear(body, h("p", { class: "notice" }, `${err.status}: ${err.message}`));
      return;
    }
    const byKey = new Map([...due.tasks, ...recent.tasks].map((t) => [t.key, t]));
    const day = today();
    const dated = [...byKey.values()].filter((t) => t.due || t.expected)
      .sort((a, b) => (a.due || a.expected).localeCompare(b.due || b.expected) || (b.hard - a.hard));
    const groups = new Map();
    for (const t of dated) {
      const d = t.due || t.expected;
      if (!groups.has(d)) groups.set(d, []);
      groups.get(d).push(t);
    }
    clear(body, [...groups.entries()].map(([d, items]) => [
      h("h2", { class: `day ${d < day ? "overdue" : ""}` }, d, d < day ? " · overdue" : d === day ? " · today" : ""),
      h("ul", { class: "rows" }, items.map((t) => h("li", { "data-key": t.key, class: ctx.selected === t.key ? "selected" : "" },
        h("button", { type: "button", class: "row", onclick: () => ctx.open(t.key, null) },
          h("div", { class: "row-head" }, t.hard ? h("span", { class: "hard" }, "HARD") : null,
            h("span", { class: "row-title" }, t.title), badge(t.status), badge(t.priority)),
          h("div", { class: "row-sub" }, h("span", { class: "row-key" }, t.key), t.assignee ? h("span", {}, t.assignee) : null,
            t.due ? null : h("span", {}, `expected${t.waits_on ? ", waits on " + t.waits_on : ""}`)))))),
    ]), dated.length ? null : h("p", { class: "dim" }, "no open task has a date"));
  }

  clear(pane, h("p", { class: "meta-line" }, "Open tasks with a date (due, else expected), earliest first."), body);
  run();
  return { refresh: run };
}

export function incidentsView(pane, ctx) {
  const s = ctx.incidentState;
  const all = h("input", { type: "checkbox", id: "inc-all", checked: s.all });
  const service = h("input", { type: "text", id: "inc-service", "aria-label": "Service", placeholder: "service",
    value: s.service });
  const body = h("div", { id: "incident-list" });

  async function run() {
    let data;
    try {
      data = await get("/incidents" + query({ all: s.all ? "true" : "", service: s.service.trim(), limit: s.limit }));
    } catch (err) {
      clear(body, h("p", { class: "notice" }, `${err.status}: ${err.message}`));
      return;
    }
    // open first, then by severity (critical first), then as the server ordered them (newest first)
    const rows = data.incidents.map((r, i) => [r, i]).sort(([a, i], [b, j]) =>
      (INCIDENT_STATUS[a.status] ?? 9) - (INCIDENT_STATUS[b.status] ?? 9)
      || (SEVERITY[a.severity] ?? 9) - (SEVERITY[b.severity] ?? 9) || i - j).map(([r]) => r);
    clear(body, h("table", { class: "grid", id: "incidents" },
      h("thead", {}, h("tr", {}, ["incident", "service", "severity", "status"].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows.map((r) => h("tr", { "data-key": r.key, class: ctx.selected === r.key ? "selected" : "" },
        titleCell(ctx, r.key, r.title), h("td", {}, r.service), h("td", {}, badge(r.severity)),
        h("td", {}, badge(r.status), r.archived ? h("div", { class: "dim" }, "archived") : null))))),
    rows.length ? null : h("p", { class: "dim" }, "no incidents"),
    moreButton(s.limit, data.count, () => { s.limit += PAGE; run(); }));
  }

  all.addEventListener("change", () => { s.all = all.checked; s.limit = PAGE; run(); });
  service.addEventListener("change", () => { s.service = service.value; s.limit = PAGE; run(); });
  clear(pane, h("div", { class: "controls" }, service, h("label", {}, all, " resolved too")), body);
  run();
  return { refresh: run };
}
