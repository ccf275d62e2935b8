// Building the page's DOM. Every string given here becomes a text node (never HTML): a memory holding
// "<script>" shows as those characters. Nothing in the page parses a string as HTML.

/** An element: h("a", {href: "/x", class: "c", onclick: fn}, "text", child, [more children]). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value" || key === "checked" || key === "selected") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Append children (strings become text; arrays are flattened; null/undefined/false skipped). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace all children of el. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element (for the provenance graph); attributes only, text through textContent. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null) el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** "3 min ago", "2 days ago"... from an ISO date (or "" when none). */
export function age(iso, now = Date.now()) {
  if (!iso) return "";
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return String(iso);
  let seconds = Math.round((now - then) / 1000);
  const future = seconds < 0;
  seconds = Math.abs(seconds);
  const units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["min", 60]];
  for (const [name, size] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      const label = name === "min" ? "min" : name + (n === 1 ? "" : "s");
      return future ? `in ${n} ${label}` : `${n} ${label} ago`;
    }
  }
  return future ? "in a moment" : "just now";
}

/** A <time> element showing the age, with the exact date as its datetime and title. */
export function when(iso) {
  if (!iso) return h("span", {class: "muted"}, "—");
  return h("time", {datetime: iso, title: iso}, age(iso));
}

/** A number shown with at most `digits` decimals. */
export function num(value, digits = 2) {
  if (value === undefined || value === null) return "—";
  return Number(value).toFixed(digits).replace(/\.?0+$/, "") || "0";
}

/** A table: headers (strings) and rows (arrays of cells: strings or nodes); `caption` names it for screen readers. */
export function table(caption, headers, rows, props = {}) {
  return h("table", props,
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", {scope: "col"}, t)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

/** A definition list from [term, value] pairs. */
export function facts(pairs, props = {}) {
  return h("dl", {class: "facts", ...props}, pairs.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** An alert box for an error (its message as text). */
export function problem(error) {
  const message = error && error.message ? error.message : String(error);
  return h("p", {class: "error", role: "alert"}, message);
}

/** A badge (type, scope...) */
export function badge(text, kind = "") {
  return h("span", {class: `badge ${kind}`.trim()}, text);
}

/** The path of a memory's detail screen. */
export function memoryPath(agent, id) {
  return `/memories/${encodeURIComponent(agent)}/${encodeURIComponent(id)}`;
}

/** Ask for confirmation in a modal <dialog>; resolves true when confirmed. */
export function confirmDialog(title, message, confirmLabel = "Confirm") {
  return new Promise((resolve) => {
    const dialog = h("dialog", {"aria-labelledby": "confirm-title", class: "confirm"});
    const done = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    append(dialog, [
      h("h2", {id: "confirm-title"}, title),
      h("p", {}, message),
      h("div", {class: "actions"},
        h("button", {type: "button", class: "danger", onclick: () => done(true)}, confirmLabel),
        h("button", {type: "button", onclick: () => done(false)}, "Cancel")),
    ]);
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); done(false); });
    document.body.append(dialog);
    dialog.showModal();
  });
}
