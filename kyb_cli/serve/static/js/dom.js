// A tiny DOM builder: text is always text (never parsed as HTML), so stored records cannot inject markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export const short = (sha) => (sha || "").slice(0, 10);

export function when(iso) {
  if (!iso) return "";
  return iso.replace("T", " ").replace(/\+00:00$|Z$/, " UTC");
}

export function badge(text, cls) {
  return text ? h("span", { class: `badge ${cls || text}` }, text) : null;
}

export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

// Every list is a list of buttons: Tab and Enter work, j/k move between them (see app.js).
export function rowButton(onclick, ...children) {
  return h("button", { type: "button", class: "row", onclick }, ...children);
}
