// The console's shell: views, the record pane, the error banner, keyboard use, reloads after a write.

import { ApiError, get, reportErrorsTo, setToken, takeTokenFromUrl } from "./api.js";
import { clear, h, short } from "./dom.js";
import { renderDeadlines } from "./deadlines.js";
import { recordView } from "./record.js";
import { searchView } from "./search.js";
import { datesView, incidentsView, tasksView } from "./work.js";

const VIEWS = { search: searchView, tasks: tasksView, dates: datesView, incidents: incidentsView };
const $ = (id) => document.getElementById(id);

const ctx = {
  health: null,
  readonly: false,
  view: "search",
  selected: null,
  current: null,
  searchState: { q: "", mode: "current", kind: "", asOf: null, from: "", to: "" },
  taskState: { status: "", priority: "", assignee: "", all: false, limit: 50 },
  incidentState: { all: false, service: "", limit: 50 },
  open: (key, at) => openRecord(key, at),
  changed: (key) => afterWrite(key),
};

function showError(err, method, path) {
  const box = $("errors");
  const where = method && path ? `${method} ${path.split("?")[0]} → ` : "";
  const form = err.status === 401 ? tokenForm() : null;
  clear(box, h("span", { class: "msg", id: "error-text" }, `${where}${err.status || ""} ${err.message}`.trim()), form,
    h("button", { type: "button", onclick: () => clear(box), "aria-label": "Dismiss error" }, "dismiss"));
}

function tokenForm() {
  const input = h("input", { type: "password", "aria-label": "Bearer token", placeholder: "token" });
  return h("form", { onsubmit: (e) => { e.preventDefault(); setToken(input.value); location.reload(); } }, input,
    h("button", { type: "submit" }, "use token"));
}

async function loadHealth() {
  try {
    ctx.health = await get("/healthz");
  } catch {
    return;
  }
  const hd = ctx.health.head;
  ctx.readonly = Boolean(ctx.health.capabilities && ctx.health.capabilities.readonly);
  $("store-head").textContent = hd ? `head ${short(hd.sha)}` : "empty store";
  const c = ctx.health.counts || {};
  $("server-state").textContent = `${c.knowledge ?? 0} knowledge · ${c.task ?? 0} tasks · ${c.incident ?? 0} incidents`
    + (ctx.readonly ? " · read-only" : "")
    + (ctx.health.history_complete === false ? " · history still indexing" : "");
}

// Below 700 px one pane shows at a time: the list, or (body.reading) the record with a back control.
const phone = window.matchMedia("(max-width: 700px)");

function show(view) {
  ctx.view = view;
  if (phone.matches) {  // a new view starts at its list: the record read before is not left under it
    ctx.selected = null;
    document.body.classList.remove("reading");
  }
  for (const b of document.querySelectorAll("#tabs button")) {
    b.toggleAttribute("aria-current", b.dataset.view === view);
    if (b.dataset.view === view) b.setAttribute("aria-current", "page");
  }
  ctx.viewHandle = VIEWS[view]($("list-pane"), ctx);
  history.replaceState(null, "", `#${view}` + (ctx.selected ? `/${ctx.selected}` : ""));
}

async function openRecord(key, at) {
  ctx.selected = key;
  ctx.current = { key, at };
  for (const el of document.querySelectorAll("#list-pane [data-key]")) {
    el.classList.toggle("selected", el.dataset.key === key);
  }
  history.replaceState(null, "", `#${ctx.view}/${encodeURIComponent(key)}`);
  document.body.classList.add("reading");
  const pane = $("detail-pane");
  await recordView(pane, ctx, key, at);
  if (ctx.selected === key) {
    pane.prepend(h("button", { type: "button", class: "back", id: "back", onclick: closeRecord }, "← back to the list"));
    if (phone.matches) pane.scrollTop = 0;
  }
}

function closeRecord() {
  const key = ctx.selected;
  ctx.selected = null;
  document.body.classList.remove("reading");
  history.replaceState(null, "", `#${ctx.view}`);
  const row = [...document.querySelectorAll("#list-pane [data-key]")].find((el) => el.dataset.key === key);
  (row?.querySelector("button.row") || rows()[0])?.focus();
}

// The view follows the address bar: `#tasks`, `#search/KEY` typed or pasted into an open console.
function followHash() {
  const [view, key] = location.hash.slice(1).split("/");
  if (VIEWS[view] && view !== ctx.view) show(view);
  const wanted = key ? decodeURIComponent(key) : null;
  if (wanted && wanted !== ctx.selected) openRecord(wanted, null);
  else if (!wanted && ctx.selected) closeRecord();
}

async function afterWrite(key) {
  clear($("errors"));
  await loadHealth();
  renderDeadlines($("deadlines"), ctx.open, () => show("dates"));
  if (ctx.viewHandle && ctx.viewHandle.refresh) ctx.viewHandle.refresh();
  if (key) await openRecord(key, null);
}

function rows() {
  return [...document.querySelectorAll("#list-pane button.row")];
}

function onKey(e) {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) && e.target.type !== "radio"
    && e.target.type !== "checkbox" && e.target.type !== "range";
  if (e.key === "Escape") {
    if (typing) e.target.blur();
    if (phone.matches && document.body.classList.contains("reading")) {
      closeRecord();
      return;
    }
    const list = rows();
    (list.find((b) => b.closest("[data-key]")?.dataset.key === ctx.selected) || list[0])?.focus();
    return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "/") {
    e.preventDefault();
    if (ctx.view !== "search") show("search");
    ctx.viewHandle.focus?.();
  } else if (["1", "2", "3", "4"].includes(e.key)) {
    show(Object.keys(VIEWS)[Number(e.key) - 1]);
  } else if (e.key === "j" || e.key === "k") {
    const list = rows();
    if (!list.length) return;
    const at = list.indexOf(document.activeElement);
    const next = at < 0 ? 0 : Math.min(list.length - 1, Math.max(0, at + (e.key === "j" ? 1 : -1)));
    list[next].focus();
    e.preventDefault();
  }
}

async function main() {
  takeTokenFromUrl();
  reportErrorsTo(showError);
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.view));
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", followHash);
  await loadHealth();
  renderDeadlines($("deadlines"), ctx.open, () => show("dates"));
  const [view, key] = location.hash.slice(1).split("/");  // read before show() rewrites it
  show(VIEWS[view] ? view : "search");
  if (key) openRecord(decodeURIComponent(key), null);
  document.body.dataset.ready = "1";
}

main().catch((err) => showError(err instanceof ApiError ? err : new ApiError(0, String(err))));
