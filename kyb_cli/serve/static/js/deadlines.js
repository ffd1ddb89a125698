// The deadline strip under the header: overdue first, hard first (the server's order, as `kyb deadlines`).

import { get } from "./api.js";
import { clear, h } from "./dom.js";

// The words of `kyb deadlines`: overdue 3d, due today, due in 2d (expected … for provisional dates).
export function describe(item) {
  const word = item.provisional ? "expected" : "due";
  const n = item.days_left;
  if (n < 0) return `overdue ${-n}d`;
  if (n === 0) return `${word} today`;
  return `${word} in ${n}d`;
}

const MAX_CHIPS = 8;

export async function renderDeadlines(strip, open, showAll) {
  let data;
  try {
    data = await get("/deadlines");
  } catch {
    clear(strip, h("span", { class: "label" }, "deadlines unavailable"));
    return;
  }
  if (!data.deadlines.length) {
    clear(strip, h("span", { class: "label" }, `nothing overdue or due soon (today ${data.today})`));
    return;
  }
  const shown = data.deadlines.slice(0, MAX_CHIPS);
  const more = data.deadlines.length - shown.length;
  clear(strip,
    h("span", { class: "label" }, `deadlines · today ${data.today}`),
    shown.map((item) => h("button", {
      type: "button", class: `chip ${item.overdue ? "overdue" : "soon"}`, title: `${item.key}: ${item.title}`,
      "data-key": item.key, onclick: () => open(item.key),
    },
    item.hard ? h("span", { class: "hard" }, "HARD") : null,
    h("span", { class: "when" }, describe(item)),
    h("span", {}, item.title),
    h("span", { class: "dim" }, item.date))),
    more > 0 ? h("a", { class: "label", href: "#dates", onclick: showAll }, `+${more} more`) : null);
}
