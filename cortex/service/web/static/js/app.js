// The memory browser: sign-in, navigation and the router that shows the screen a path names.
// Each screen is a module of screens/ exporting `routes`: [{path: RegExp, title, render(ctx) -> Node}].

import {ApiError, api, changesBegun, setCsrf, writing} from "./api.js";
import {h, problem, replace} from "./dom.js";
import * as live from "./live.js";
import * as admin from "./screens/admin.js";
import * as agents from "./screens/agents.js";
import * as memory from "./screens/memory.js";
import * as review from "./screens/review.js";
import * as runs from "./screens/runs.js";
import * as search from "./screens/search.js";
import * as sessions from "./screens/sessions.js";
import * as team from "./screens/team.js";

const SCREENS = [agents, search, memory, sessions, review, team, runs, admin];
const ROUTES = SCREENS.flatMap((screen) => screen.routes);

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");

/** Who is signed in: {admin, agent, token_id, csrf} or null. */
let me = null;
let agentList = null;
let rendering = 0;
/** The render under way (its promise), and the page path (with its query) whose screen #main shows. */
let underWay = null;
let shownPath = null;

/** The declared agents with memory the caller may use (cached for the page's life; `fresh` reloads). */
async function declaredAgents(fresh = false) {
  if (!agentList || fresh) agentList = await api("GET", "/agents");
  return agentList;
}

/** Go to a path of the page (pushes it onto the history). */
export function navigate(path, {replaceState = false} = {}) {
  if (replaceState) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  return show();
}

function signInForm(message) {
  const input = h("input", {id: "token", name: "token", type: "password", autocomplete: "off", required: true,
    spellcheck: "false"});
  const status = h("div", {"aria-live": "polite"}, message ? problem({message}) : null);
  const form = h("form", {class: "signin", "aria-labelledby": "signin-title"},
    h("h1", {id: "signin-title"}, "Sign in"),
    h("p", {}, "Paste a Cortex token: an admin token (", h("code", {}, "cortex token create --admin"),
      ") sees every agent; an agent's token (", h("code", {}, "cortex token create --agent NAME"),
      ") sees what that agent may read."),
    h("label", {for: "token"}, "Token"),
    input,
    h("button", {type: "submit"}, "Sign in"),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const answer = await api("POST", "/session", {token: input.value.trim()});
      input.value = "";
      signedIn(answer);
      await show();
    } catch (error) {
      replace(status, problem(error.status === 401 ? {message: "That token is not valid here."} : error));
      input.focus();
    }
  });
  return form;
}

function signedIn(answer) {
  me = answer;
  agentList = null;
  setCsrf(answer.csrf);
  nav.hidden = false;
  document.getElementById("nav-admin").hidden = !me.admin;
  const signOut = h("button", {type: "button", class: "link"}, "Sign out");
  signOut.addEventListener("click", async () => {
    try { await api("DELETE", "/session"); } catch (_) { /* already out */ }
    signedOut();
    history.pushState(null, "", "/");
    await show();
  });
  replace(who, h("span", {}, me.admin ? "admin" : `agent ${me.agent}`), " ", signOut);
  live.start(me);
}

function signedOut(message) {
  me = null;
  agentList = null;
  setCsrf(null);
  live.stop();
  nav.hidden = true;
  replace(who);
  document.title = "Sign in · Cortex";
  replace(main, signInForm(message));
  document.getElementById("token").focus();
}

function markCurrent(path) {
  for (const link of nav.querySelectorAll("a")) {
    const here = path === link.getAttribute("href") || path.startsWith(link.getAttribute("href") + "/");
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** Show the screen the current path names; `quiet` (a live update, live.js): in place, without "Loading…" and
 * without moving the focus, and what the screen said in its elements marked `data-keep` (with an id: a status, the
 * report of an action) stays: the live update that follows a screen's own change must not wipe its report. A
 * quiet render during which the page began a change is not shown (false: live.js tries again after it). */
export function show(options) {
  const shown = display(options);
  underWay = shown;
  shown.finally(() => { if (underWay === shown) underWay = null; });
  return shown;
}

/** Resolves once no render is under way (live.js re-renders only then: not over a screen being shown). */
export async function settled() {
  while (underWay) {
    try { await underWay; } catch (_) { /* shown as an error already */ }
  }
}

/** Move what the shown screen's `data-keep` elements hold into the same elements (by id) of its new render. */
function carryOver(node) {
  for (const kept of node.querySelectorAll("[data-keep][id]")) {
    const old = document.getElementById(kept.id);
    if (old && main.contains(old) && old.hasAttribute("data-keep")) kept.replaceChildren(...old.childNodes);
  }
}

async function display({quiet = false} = {}) {
  const ticket = ++rendering;
  const page = location.pathname + location.search;
  const changes = changesBegun();
  if (!me) {
    signedOut();
    return;
  }
  let path = location.pathname.replace(/\/+$/, "") || "/";
  if (path === "/") path = "/agents";
  const route = ROUTES.find((r) => r.path.test(path));
  markCurrent(path);
  const params = route ? path.match(route.path).slice(1).map(decodeURIComponent) : [];
  const ctx = {me, params, query: new URLSearchParams(location.search), navigate, api, agents: declaredAgents,
    refresh: show, main};
  if (!quiet) {
    replace(main, h("p", {class: "loading", role: "status"}, "Loading…"));
    shownPath = null;
  }
  let node;
  try {
    if (!route) throw new ApiError(404, "NotFound", `No screen at ${path}`);
    node = await route.render(ctx);
    document.title = `${typeof route.title === "function" ? route.title(ctx) : route.title} · Cortex`;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      signedOut("Your session has ended: sign in again.");
      return;
    }
    node = h("section", {}, h("h1", {}, error.status === 404 ? "Not found" : "Something went wrong"), problem(error));
    document.title = "Error · Cortex";
  }
  if (ticket !== rendering) return undefined;  // a later navigation won
  // a change the reader made meanwhile: its handler reports it on the screen shown, then its event re-renders
  // or a form or dialog the reader opened while it was drawn (an edit): not taken from under their hands
  if (quiet && (writing() || changesBegun() !== changes || live.busy())) return false;
  if (quiet && shownPath === page) carryOver(node);
  replace(main, node);
  shownPath = page;
  const heading = main.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    if (!quiet && (document.activeElement === document.body || !main.contains(document.activeElement))) {
      heading.focus({preventScroll: true});
    }
  }
  document.dispatchEvent(new CustomEvent("cortex:shown"));
  return true;
}

// Links of the page navigate without reloading it; anything else (API files, /docs) loads normally.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey
      || link.target || link.hasAttribute("download")) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin || /^\/(v1|static|docs|mcp|openapi\.json|redoc)(\/|$)/.test(url.pathname)) return;
  if (url.hash && url.pathname === location.pathname) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", () => show());

async function boot() {
  try {
    signedIn(await api("GET", "/session"));
  } catch (error) {
    signedOut(error instanceof ApiError && error.status === 401 ? null : error.message);
    return;
  }
  await show();
}

boot();
