// Search over the four time modes: now, every version, as of a moment (the slider), changed in a window.

import { get, query } from "./api.js";
import { badge, clear, debounce, h, rowButton, short, when } from "./dom.js";
import { highlight } from "./markdown.js";

const MODES = [
  ["current", "Now"],
  ["history", "Every version"],
  ["as_of", "As of"],
  ["changed_between", "Changed between"],
];

function isoSeconds(epoch) {
  return new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function searchView(pane, ctx) {
  const state = ctx.searchState;
  const health = ctx.health || {};
  const first = Date.parse(health.first_commit_at || new Date().toISOString()) / 1000;
  const last = Math.max(Date.parse((health.head && health.head.committed_at) || new Date().toISOString()) / 1000,
    first + 1);
  if (state.asOf == null || state.asOf > last || state.asOf < first) state.asOf = last;

  const input = h("input", {
    type: "search", id: "q", placeholder: "Search records… (any text; empty lists newest first)",
    "aria-label": "Search text", value: state.q, autocomplete: "off",
  });
  const kind = h("select", { "aria-label": "Kind", id: "kind" },
    [["", "any kind"], ["knowledge", "knowledge"], ["incident", "incidents"], ["task", "tasks"]].map(
      ([v, t]) => h("option", { value: v, selected: state.kind === v }, t)));
  const semanticOn = Boolean(health.capabilities && health.capabilities.semantic);
  const meaning = semanticOn ? h("input", { type: "checkbox", id: "semantic", checked: state.semantic !== false }) : null;
  const modes = h("fieldset", { class: "modes", role: "radiogroup" }, h("legend", {}, "Time mode"),
    MODES.map(([value, label]) => h("label", {},
      h("input", { type: "radio", name: "mode", value, checked: state.mode === value, "data-mode": value }), label)));
  const slider = h("input", {
    type: "range", id: "as-of", min: Math.floor(first), max: Math.ceil(last), step: 1, value: state.asOf,
    "aria-label": "As of (time slider)",
  });
  const sliderOut = h("output", { for: "as-of", id: "as-of-value" }, isoSeconds(state.asOf));
  const from = h("input", { type: "date", id: "from", "aria-label": "Window start", value: state.from });
  const to = h("input", { type: "date", id: "to", "aria-label": "Window end", value: state.to });
  const timebar = h("div", { class: "timebar" });
  const meta = h("div", { class: "meta-line", id: "search-meta", "aria-live": "polite" });
  const list = h("ul", { class: "rows", id: "results" });
  let seq = 0;

  function renderTimebar() {
    if (state.mode === "as_of") {
      clear(timebar, h("span", { class: "dim" }, "as of"), slider, sliderOut);
    } else if (state.mode === "changed_between") {
      clear(timebar, h("span", { class: "dim" }, "from"), from, h("span", { class: "dim" }, "to"), to);
    } else {
      clear(timebar);
    }
  }

  async function run() {
    const mine = ++seq;
    const params = { q: state.q, limit: state.limit || 50, kind: state.kind };
    if (semanticOn && state.semantic === false) params.semantic = "false";
    if (state.mode === "history") params.history = "true";
    if (state.mode === "as_of") params.as_of = isoSeconds(state.asOf);
    if (state.mode === "changed_between") {
      if (!state.from || !state.to) {
        clear(meta, "pick both ends of the window");
        clear(list);
        return;
      }
      params.changed_between = `${state.from},${state.to}`;
    }
    meta.textContent = "searching…";
    let data;
    try {
      data = await get("/search" + query(params));
    } catch (err) {
      if (mine === seq) clear(meta, `error ${err.status}: ${err.message}`);
      return;
    }
    if (mine !== seq) return; // a newer question was asked meanwhile
    const where = data.as_of ? ` · ${when(data.as_of)}` : data.window ? ` · ${data.window.map(when).join(" … ")}` : "";
    clear(meta, `${data.count} hit(s), mode ${data.mode}${where}, ${data.semantic ? "hybrid" : "lexical"}`,
      data.pending_vectors ? h("span", { class: "pending", id: "pending-vectors" },
        ` · ${data.pending_vectors} version(s) not yet embedded: search by meaning may miss them`) : "",
      data.history_complete === false ? " · history still being indexed: past answers may be incomplete" : "");
    const weakOnly = data.confident === false && data.hits.length && state.q.trim();
    clear(list, weakOnly ? h("li", { class: "empty", id: "not-confident" }, h("p", { class: "notice" },
      "Nothing strong matched: the hits below are weak guesses, not an answer.")) : null,
    data.hits.map((hit) => h("li", { "data-key": hit.key, "data-sha": hit.sha, "data-strength": hit.strength || null,
      class: [ctx.selected === hit.key ? "selected" : "", hit.strength === "weak" ? "weak" : ""].join(" ").trim() || null },
      rowButton(() => ctx.open(hit.key, hit.is_head ? null : hit.sha),
        h("div", { class: "row-head" },
          h("span", { class: "row-title" }, hit.title),
          badge(hit.state), hit.is_head ? null : badge("past", "past"),
          hit.strength ? badge(hit.strength, `strength ${hit.strength}`) : null),
        hit.snippet ? h("div", { class: "snippet" }, highlight(hit.snippet, state.q)) : null,
        h("div", { class: "row-sub" },
          h("span", { class: "row-key" }, hit.key),
          h("span", {}, hit.kind),
          hit.found_by ? h("span", { class: "found-by", title: "found by" }, hit.found_by) : null,
          h("span", { class: "mono" }, `${short(hit.sha)} · ${when(hit.committed_at)}`))))));
    if (!data.hits.length) list.append(h("li", { class: "empty" }, h("p", { class: "dim" }, " no hits")));
    if (data.count >= params.limit && params.limit < 100) {
      list.append(h("li", { class: "empty" }, h("button", { type: "button", class: "secondary more", id: "more-hits",
        onclick: () => { state.limit = 100; run(); } }, "Show up to 100 hits")));
    }
  }

  const soon = debounce(run, 180);
  input.addEventListener("input", () => { state.q = input.value; state.limit = 50; soon(); });
  kind.addEventListener("change", () => { state.kind = kind.value; run(); });
  if (meaning) meaning.addEventListener("change", () => { state.semantic = meaning.checked; run(); });
  modes.addEventListener("change", (e) => { state.mode = e.target.value; renderTimebar(); run(); });
  slider.addEventListener("input", () => {
    state.asOf = Number(slider.value);
    sliderOut.textContent = isoSeconds(state.asOf);
    soon();
  });
  from.addEventListener("change", () => { state.from = from.value; run(); });
  to.addEventListener("change", () => { state.to = to.value; run(); });

  renderTimebar();
  clear(pane, h("div", { class: "controls" }, input, kind,
    meaning ? h("label", { title: "Fuse search by meaning (the model) with words" }, meaning, " by meaning") : null),
  modes, timebar, meta, list);
  run();
  // `/` comes back to the question with the cursor after the old text, ready to extend it
  const focus = () => { input.focus(); const end = input.value.length; input.setSelectionRange(end, end); };
  return { focus, refresh: run };
}
