// What a person can do to a task or an incident from its record view. Every action is one API write
// (one Git commit, transport http); after it the record, the lists and the deadline strip reload.

import { enc, get, post } from "./api.js";
import { h } from "./dom.js";

const LIVE = ["open", "in_progress", "blocked"];

function form(title, ...children) {
  return h("form", { class: "form", onsubmit: (e) => e.preventDefault() }, h("div", { class: "title" }, title), children);
}

async function act(ctx, key, fn, button) {
  button.disabled = true;
  try {
    await fn();
    ctx.changed(key);
    return true;
  } catch {
    button.disabled = false; // the error banner shows what the server said
    return false;
  }
}

// Moving a date rewrites the task (as `kyb task` does): every stored field is sent back as it is, the
// date changed; tags and the other deadline fields are kept by the server when omitted.
async function moveDate(key, due) {
  const rec = await get(`/knowledge/${enc(key)}`);
  return post("/tasks", {
    key, title: rec.title, body: rec.body, status: rec.status || "open", priority: rec.priority || "",
    blocked_reason: rec.blocked_reason || "", assignee: rec.assignee || "", parent: rec.parent_task || "",
    knowledge: rec.knowledge || [], resolution: rec.resolution || "", refs: rec.refs || [], due,
  });
}

function taskActions(rec, ctx) {
  const live = LIVE.includes(rec.status || "open");
  const status = h("select", { id: "act-status", "aria-label": "New status" },
    LIVE.map((s) => h("option", { value: s, selected: (rec.status || "open") === s }, s)));
  const reason = h("input", { type: "text", id: "act-blocked-reason", placeholder: "why blocked (for blocked)",
    "aria-label": "Blocked reason", value: rec.blocked_reason || "" });
  const assignee = h("input", { type: "text", id: "act-assignee", "aria-label": "Assignee", value: rec.assignee || "",
    placeholder: "assignee" });
  const statusBtn = h("button", { type: "submit", class: "primary", id: "act-status-go" }, live ? "Change status" : "Reopen");
  statusBtn.addEventListener("click", () => act(ctx, rec.key, () => post(`/tasks/${enc(rec.key)}/transition`, {
    status: status.value, assignee: assignee.value, blocked_reason: status.value === "blocked" ? reason.value : null,
  }), statusBtn));

  const due = h("input", { type: "date", id: "act-due", "aria-label": "New due date", value: rec.due || "" });
  const dueBtn = h("button", { type: "submit", class: "primary", id: "act-due-go" }, "Move date");
  dueBtn.addEventListener("click", () => act(ctx, rec.key, () => moveDate(rec.key, due.value), dueBtn));

  const closeAs = h("select", { id: "act-close-status", "aria-label": "Close as" },
    h("option", { value: "done" }, "done"), h("option", { value: "dropped" }, "dropped"));
  const resolution = h("textarea", { id: "act-resolution", required: true, "aria-label": "Resolution",
    placeholder: "What came of it (or why it was dropped) — required" });
  const closeBtn = h("button", { type: "submit", class: "primary", id: "act-close-go" }, "Close task");
  closeBtn.addEventListener("click", () => {
    if (!resolution.value.trim()) {
      resolution.reportValidity();
      return;
    }
    act(ctx, rec.key, () => post(`/tasks/${enc(rec.key)}/resolve`, { status: closeAs.value, resolution: resolution.value }),
      closeBtn);
  });

  return h("section", { class: "actions", id: "actions" }, h("h2", {}, "Actions"),
    form("Status", h("label", {}, "status", status), h("label", {}, "assignee", assignee),
      h("label", {}, "blocked reason", reason), statusBtn),
    live ? form("Date", h("label", {}, "due", due), dueBtn) : null,
    live ? form("Close with a resolution", h("label", {}, "as", closeAs),
      h("label", { class: "wide" }, "resolution", resolution), closeBtn) : null);
}

function incidentActions(rec, ctx) {
  if (rec.status === "resolved") return null;
  const resolution = h("textarea", { id: "act-inc-resolution", "aria-label": "Resolution",
    placeholder: "What fixed it (required to resolve)" });
  const resolveBtn = h("button", { type: "submit", class: "primary", id: "act-resolve-go" }, "Resolve");
  const mitigateBtn = h("button", { type: "submit", class: "secondary", id: "act-mitigate-go" }, "Mark mitigated");
  resolveBtn.addEventListener("click", () => act(ctx, rec.key, () => post(`/incidents/${enc(rec.key)}/resolve`, {
    status: "resolved", resolution: resolution.value }), resolveBtn));
  mitigateBtn.addEventListener("click", () => act(ctx, rec.key, () => post(`/incidents/${enc(rec.key)}/resolve`, {
    status: "mitigated", resolution: resolution.value }), mitigateBtn));
  return h("section", { class: "actions", id: "actions" }, h("h2", {}, "Actions"),
    form("Resolve the incident", h("label", { class: "wide" }, "resolution", resolution), resolveBtn,
      rec.status === "open" ? mitigateBtn : null));
}

export function actionsFor(rec, ctx) {
  if (ctx.readonly || !rec.is_head) return null;
  if (rec.kind === "task") return taskActions(rec, ctx);
  if (rec.kind === "incident") return incidentActions(rec, ctx);
  return null;
}

export function slug(text) {
  return text.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 90);
}

// "Open a task": the form at the top of the task queue.
export function newTaskForm(ctx) {
  const title = h("input", { type: "text", id: "new-title", "aria-label": "Title", placeholder: "What is to be done",
    required: true });
  const key = h("input", { type: "text", id: "new-key", "aria-label": "Key", placeholder: "task-…" });
  const priority = h("select", { id: "new-priority", "aria-label": "Priority" },
    ["", "low", "medium", "high", "critical"].map((p) => h("option", { value: p }, p || "unranked")));
  const assignee = h("input", { type: "text", id: "new-assignee", "aria-label": "Assignee", placeholder: "assignee" });
  const due = h("input", { type: "date", id: "new-due", "aria-label": "Due date" });
  const hard = h("input", { type: "checkbox", id: "new-hard", "aria-label": "Hard deadline" });
  const body = h("textarea", { id: "new-body", "aria-label": "Body", placeholder: "Details (Markdown)" });
  let keyTouched = false;
  key.addEventListener("input", () => { keyTouched = true; });
  title.addEventListener("input", () => { if (!keyTouched) key.value = title.value ? `task-${slug(title.value)}` : ""; });
  const go = h("button", { type: "submit", class: "primary", id: "new-go" }, "Open task");
  go.addEventListener("click", () => {
    if (!title.value.trim()) {
      title.reportValidity();
      return;
    }
    const payload = { key: key.value.trim(), title: title.value, body: body.value, priority: priority.value,
      assignee: assignee.value, due: due.value || null };
    if (due.value) payload.hard = hard.checked;
    act(ctx, payload.key, () => post("/tasks", payload), go).then((ok) => {
      go.disabled = false;
      if (!ok) return; // a refused task keeps what was typed, to fix and send again
      for (const el of [title, key, assignee, due, body]) el.value = "";
      priority.value = "";
      hard.checked = false;
      keyTouched = false;
    });
  });
  return h("details", { class: "new-task", id: "new-task" }, h("summary", {}, "Open a task"),
    form("New task", h("label", {}, "title", title), h("label", {}, "key", key), h("label", {}, "priority", priority),
      h("label", {}, "assignee", assignee), h("label", {}, "due", due), h("label", {}, "hard", hard),
      h("label", { class: "wide" }, "body", body), go));
}
