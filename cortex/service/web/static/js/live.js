// Live updates: server-sent events from GET /v1/events (memories written, agents' starts, captures, reviews,
// consolidation runs; the server sends each token only what it may read). Each one is announced in the page's
// status region (#live), handed to whatever screen listens ("cortex:event" on document), and re-renders the
// current screen when REFRESH says it changes it: at most about once a second, and never under the reader's
// hands (a field being typed in, a dialog open): then a "New activity" note with a "Refresh" button instead.
// Nor over the page's own work: it waits for the page's changes under way (api.js) and for a screen being shown
// (app.js), and what a screen said of its own change (its `data-keep` elements) stays on the re-rendered screen.
// The header says whether the page is live ("Live", "Reconnecting…", "Offline"), in words.
//
// One stream per browser, whatever its tabs: a stream holds one of the six connections a browser opens to a host,
// so a tab each would leave a sixth tab nothing to load with. The tabs signed in as the same caller elect a leader
// with the Web Locks API (the lock is held as long as the tab lives and passes to a waiting tab when it closes);
// the leader reads the stream and relays each event and its state to the others on a BroadcastChannel. A tab that
// takes over reads on from the last event it was relayed (Last-Event-ID), so nothing is missed. Where the browser
// offers no Web Locks (a page served over plain http beyond loopback is no secure context) each tab reads its own.

import {sessionHeaders, writing} from "./api.js";
import {h, replace} from "./dom.js";
import {settled, show} from "./app.js";

/** Which events change which screen: the screen's path pattern and the kinds of event that change it. `agent`
 * (a group of the pattern) keeps the events of that agent (or of a shared scope it may read); `memory` (a group)
 * keeps those that name that memory. The first pattern the path matches applies; a path none matches (a search,
 * the admin screen) is never re-rendered by itself. */
export const REFRESH = [
  {path: /^\/(agents)?$/, kinds: ["write", "capture", "injection", "review", "consolidation"]},
  {path: /^\/agents\/([^/]+)/, kinds: ["write", "capture", "injection", "review", "consolidation"], agent: 1},
  {path: /^\/memories\/([^/]+)\/([^/]+)/, kinds: ["write", "capture", "review", "consolidation"], memory: 2},
  {path: /^\/sessions(\/|$)/, kinds: ["injection", "capture"]},
  {path: /^\/review(\/|$)/, kinds: ["review", "consolidation"]},
  {path: /^\/team(\/|$)/, kinds: ["write", "capture", "review", "consolidation"]},
  {path: /^\/runs(\/|$)/, kinds: ["consolidation", "review", "capture"]},
];

/** The least time between two re-renderings of a screen (ms), and how long a burst of events is gathered. */
const INTERVAL = 1000;
const GATHER = 150;
/** How long to wait before opening the stream again when the browser gave up on it (ms, doubling to MAX). */
const RETRY = 3000;
const MAX_RETRY = 60000;

let source = null;
let lastId = null;
let retryIn = RETRY;
let retryTimer = null;
let flushTimer = null;
let lastRender = 0;
let wanted = false;
let messages = [];
let indicator = null;
let notice = null;
/** The tabs' channel (null: reading alone), whether this tab leads, the end of its lock, its state as said. */
let channel = null;
let leading = false;
let unlock = null;
let stated = null;

/** Say the stream's state in the header, and to the other tabs when this one reads for them. */
function state(text, kind) {
  stated = {type: "state", text, kind};
  indicate(text, kind);
  if (leading && channel) channel.postMessage(stated);
}

/** The header's indicator (made once per sign-in). */
function indicate(text, kind) {
  if (!indicator) {
    indicator = h("span", {class: "live-state", id: "live-state"});
    const who = document.getElementById("who");
    who.parentNode.insertBefore(indicator, who);
  }
  indicator.dataset.state = kind;
  replace(indicator, h("span", {class: "live-dot", "aria-hidden": "true"}), text);
}

/** Start listening for the signed-in caller (the server filters what each token may see). Read with fetch, not
 * EventSource: every request of the page carries the session's key header, which EventSource cannot send. */
export function start(me) {
  stop();
  state("Connecting…", "connecting");
  if (!navigator.locks || typeof BroadcastChannel !== "function") {
    read(me);
    return;
  }
  // one leader per caller: tabs signed in as another caller (another token) have a stream of their own
  const name = `cortex-live:${me.token_id || (me.admin ? "admin" : `agent:${me.agent}`)}`;
  const tabs = new BroadcastChannel(name);
  channel = tabs;
  tabs.onmessage = (message) => relayed(message.data);
  const abort = new AbortController();
  unlock = () => abort.abort();
  navigator.locks.request(name, {signal: abort.signal}, () => new Promise((resolve) => {
    if (channel !== tabs) return resolve();  // stopped while waiting
    unlock = resolve;
    leading = true;
    read(me);
  })).catch(() => { /* stopped while waiting: the request was aborted */ });
  tabs.postMessage({type: "hello"});  // the leader, if any, says its state
}

function read(me) {
  const controller = new AbortController();
  source = controller;
  state("Connecting…", "connecting");
  listen(me, controller);
}

/** A message of another tab: the leader's event or state, or a new tab asking for the state. */
function relayed(message) {
  if (!message || leading && message.type !== "hello") return;
  if (message.type === "hello") {
    if (leading && stated) channel.postMessage(stated);
  } else if (message.type === "state") {
    indicate(message.text, message.kind);
  } else if (message.type === "event") {
    if (message.id) lastId = message.id;
    received(message.event);
  }
}

async function listen(me, controller) {
  let answer;
  try {
    answer = await fetch("/v1/events", {credentials: "same-origin", signal: controller.signal,
      headers: {...sessionHeaders(), ...(lastId ? {"last-event-id": lastId} : {})}});
  } catch (_) {
    return retry(me, controller);
  }
  if (!answer.ok || !answer.body) {
    // the session ended (401), or no stream here: say so, and try again later unless the session is over
    state("Offline", "offline");
    return answer.status === 401 ? undefined : retry(me, controller, false);
  }
  retryIn = RETRY;
  state("Live", "live");
  const reader = answer.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true}).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        frame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (_) { /* the connection dropped */ }
  retry(me, controller);
}

// one server-sent event: its id (replayed from on reconnection) and its JSON data
function frame(text) {
  const data = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("id:")) lastId = line.slice(3).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return;  // a keep-alive comment
  let event;
  try { event = JSON.parse(data.join("\n")); } catch (_) { return; }
  if (leading && channel) channel.postMessage({type: "event", event, id: lastId});
  received(event);
}

function retry(me, controller, reconnecting = true) {
  if (source !== controller || controller.signal.aborted) return;  // stopped, or started anew
  if (reconnecting) state("Reconnecting…", "reconnecting");
  retryTimer = setTimeout(() => { if (source === controller) listen(me, controller); }, retryIn);
  retryIn = Math.min(retryIn * 2, MAX_RETRY);
}

/** Stop listening (signed out). */
export function stop() {
  if (source) source.abort();
  source = null;
  if (channel) channel.close();
  channel = null;
  leading = false;
  if (unlock) unlock();  // another tab leads now
  unlock = null;
  stated = null;
  lastId = null;
  clearTimeout(retryTimer);
  clearTimeout(flushTimer);
  flushTimer = null;
  wanted = false;
  messages = [];
  if (indicator) indicator.remove();
  indicator = null;
  hideNotice();
}

/** What an event says, in a sentence for the status region. */
export function describe(event) {
  const who = event.agent || event.scope || "the swarm";
  const where = event.scope && !String(event.scope).startsWith("agent:") ? ` in ${event.scope}` : "";
  const count = Number(event.count) || 0;
  switch (event.kind) {
    case "write": {
      const verbs = {update: "updated", supersede: "superseded", validate: "validated", forget: "forgotten"};
      if (event.action === "inject") return `New learning from ${who}${where}`;
      if (verbs[event.action]) return `Memory of ${who}${where} ${verbs[event.action]}`;
      return count > 1 ? `${count} new memories for ${who}${where}` : `New memory for ${who}${where}`;
    }
    case "injection":
      return `${who} started: ${count} ${count === 1 ? "memory" : "memories"} injected`;
    case "capture":
      if (event.action === "use") return `${who} used ${count} ${count === 1 ? "memory" : "memories"}`;
      return event.action === "undo" ? `Capture undone for ${who}` : `New capture for ${who}${where}`;
    case "review":
      return event.action === "held" ? `New memory held for review for ${who}${where}`
        : `Review item decided for ${who}${where}`;
    case "consolidation": {
      const review = Number(event.review) || 0;
      const found = review ? `: ${review} ${review === 1 ? "contradiction" : "contradictions"} for review` : "";
      return `${event.action === "undo" ? "Consolidation run undone" : "Consolidation run"} in ${event.scope}${found}`;
    }
    case "gap":
      return Number(event.dropped) < 0 ? "Live again: the server restarted" : "Some live updates were missed";
    default:
      return `Activity for ${who}`;
  }
}

/** The rule of REFRESH for the current path and whether it makes `event` re-render the screen. */
export function changes(event, path = location.pathname) {
  path = path.replace(/\/+$/, "") || "/";
  const rule = REFRESH.find((r) => r.path.test(path));
  if (rule && event.kind === "gap") return true;  // missed events: whatever they were, read afresh
  if (!rule || !rule.kinds.includes(event.kind)) return false;
  const match = path.match(rule.path).map((part) => (part === undefined ? part : safeDecode(part)));
  if (rule.memory) {
    const id = match[rule.memory];
    return (event.ids || []).includes(id) || event.held === id;
  }
  if (rule.agent) {
    const agent = match[rule.agent];
    const scope = String(event.scope || "");
    return event.agent === agent || scope === `agent:${agent}` || !scope.startsWith("agent:");
  }
  return true;
}

function safeDecode(part) {
  try { return decodeURIComponent(part); } catch (_) { return part; }
}

function received(event) {
  document.dispatchEvent(new CustomEvent("cortex:event", {detail: event}));
  messages.push(describe(event));
  if (changes(event)) wanted = true;
  if (!flushTimer) {
    flushTimer = setTimeout(flush, Math.max(GATHER, lastRender + INTERVAL - Date.now()));
  }
}

/** Whether re-rendering now would take something from under the reader: a field of the screen being typed in,
 * or a dialog open. */
export function busy() {
  if (document.querySelector("dialog[open]")) return true;
  const main = document.getElementById("main");
  // a form the reader opened (an edit, a supersession) or an error being read: not under their hands either
  if (main && main.querySelector("[data-busy], [role=alert]")) return true;
  const active = document.activeElement;
  if (!active || !main || !main.contains(active)) return false;
  return active.isContentEditable || active.tagName === "TEXTAREA" || active.tagName === "SELECT"
    || (active.tagName === "INPUT" && !["button", "submit", "reset", "checkbox", "radio", "image"].includes(active.type));
}

async function flush() {
  flushTimer = null;
  if (wanted && writing()) {  // the page's own change under way: its screen reports it first, then re-renders
    flushTimer = setTimeout(flush, GATHER);
    return;
  }
  const said = messages.length > 3 ? [...messages.slice(-3), `and ${messages.length - 3} more`] : messages;
  messages = [];
  const region = document.getElementById("live");
  const held = wanted && busy();
  if (region && said.length) {
    replace(region, said.join(". ") + (held ? ". Refresh in the header shows it" : ""));
  }
  if (!wanted) return;
  wanted = false;
  if (held) {
    showNotice();
    return;
  }
  lastRender = Date.now();
  await refresh();
}

/** Re-render the current screen in place: the reader keeps their place (focus, scroll). */
async function refresh() {
  hideNotice();
  await settled();
  const main = document.getElementById("main");
  const focused = main && main.contains(document.activeElement) ? describeFocus(document.activeElement) : null;
  const scroll = window.scrollY;
  if (await show({quiet: true}) === false) {  // the reader began a change meanwhile: once it is done
    wanted = true;
    if (!flushTimer) flushTimer = setTimeout(flush, GATHER);
    return;
  }
  window.scrollTo(0, scroll);
  if (focused) {
    const again = findFocus(main, focused) || main.querySelector("h1");
    if (again) again.focus({preventScroll: true});
  }
}

function describeFocus(el) {
  return {tag: el.tagName, id: el.id, href: el.getAttribute("href"), name: el.getAttribute("name"),
    text: (el.textContent || "").trim()};
}

function findFocus(main, was) {
  if (was.id) {
    const byId = document.getElementById(was.id);
    if (byId && main.contains(byId)) return byId;
  }
  for (const el of main.querySelectorAll(was.tag.toLowerCase())) {
    if (was.href !== null && el.getAttribute("href") === was.href) return el;
    if (was.href === null && was.name && el.getAttribute("name") === was.name) return el;
    if (was.href === null && !was.name && was.text && (el.textContent || "").trim() === was.text) return el;
  }
  return null;
}

function showNotice() {
  if (notice) return;
  const button = h("button", {type: "button", class: "link"}, "Refresh");
  button.addEventListener("click", async () => {
    lastRender = Date.now();
    await refresh();
    const heading = document.querySelector("#main h1");
    if (heading) heading.focus({preventScroll: true});
  });
  notice = h("span", {class: "live-notice"}, "New activity — ", button);
  const who = document.getElementById("who");
  who.parentNode.insertBefore(notice, who);
}

function hideNotice() {
  if (notice) notice.remove();
  notice = null;
}

// a screen shown afresh (navigation, or its own refresh) has nothing new to offer
document.addEventListener("cortex:shown", hideNotice);
