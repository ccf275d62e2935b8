// Agents: /agents lists each declared agent with memory (its figures from GET /v1/agents/{agent}/overview) and
// the broken agent files; /agents/<name> is one agent at a glance, what proved useful (GET
// /v1/agents/{agent}/usage/memories) and a paged list of every memory it reads.

import {query} from "../api.js";
import {badge, facts, h, memoryPath, num, s, table, when} from "../dom.js";

const PAGE = 50;

function agentPath(name) {
  return `/agents/${encodeURIComponent(name)}`;
}

function counts(map) {
  const entries = Object.entries(map || {}).filter(([, n]) => n > 0);
  if (!entries.length) return h("span", {class: "muted"}, "none");
  return entries.map(([k, n], i) => [i ? " · " : "", `${n} ${k}`]);
}

// the agent's own scope is "agent" in the API; the screens call it "own" beside team:NAME and swarm
function scopeName(scope) {
  return scope === "agent" ? "own" : scope;
}

function byScope(map) {
  return counts(Object.fromEntries(Object.entries(map || {}).map(([k, n]) => [scopeName(k), n])));
}

// an age with its exact date in words (UTC, to the minute), not only in a tooltip
function activity(iso) {
  if (!iso) return when(iso);
  return [when(iso), " ", h("span", {class: "muted"}, `(${iso.slice(0, 16).replace("T", " ")} UTC)`)];
}

// what needs a look soon: memories whose time to live ends within a week, and those the next prune deletes
function soon(o) {
  return `${o.expiring_soon} expiring within a week, ${o.prune_due} due for the prune`;
}

// fresh / fading / stale as a stacked bar (SVG: no inline style) and its numbers in words
function decay(d, total) {
  const parts = [["fresh", d.fresh], ["fading", d.fading], ["stale", d.stale]];
  const width = 120;
  let x = 0;
  const bars = total ? parts.map(([kind, n]) => {
    const w = (n / total) * width;
    const rect = s("rect", {x: x.toFixed(1), y: 0, width: w.toFixed(1), height: 10, class: `decay-${kind}`});
    x += w;
    return rect;
  }) : [];
  const words = `${d.fresh} fresh, ${d.fading} fading, ${d.stale} stale`;
  return h("span", {class: "decay"},
    s("svg", {width: String(width), height: "10", viewBox: `0 0 ${width} 10`, "aria-hidden": "true",
      class: "decay-bar"}, s("rect", {x: 0, y: 0, width, height: 10, class: "decay-none"}), bars),
    " ", words);
}

async function overviews(ctx, agents) {
  const answers = await Promise.all(agents.map((a) => ctx.api("GET", `${agentPath(a.name)}/overview`)
    .catch((error) => ({error}))));
  return Object.fromEntries(agents.map((a, i) => [a.name, answers[i]]));
}

async function list(ctx) {
  const agents = await ctx.agents(true);
  const sound = agents.filter((a) => a.problems.length === 0 && a.memory_enabled);
  const broken = agents.filter((a) => a.problems.length > 0);
  const figures = await overviews(ctx, sound);
  const rows = sound.map((a) => {
    const o = figures[a.name];
    if (o.error) return [h("a", {href: agentPath(a.name)}, a.name), o.error.message, "", "", "", "", "", ""];
    return [
      h("a", {href: agentPath(a.name)}, a.name),
      String(o.total),
      counts(o.by_type),
      byScope(o.by_scope),
      counts(o.by_source),
      activity(o.last_activity),
      decay(o.decay, o.total),
      soon(o),
    ];
  });
  return h("section", {},
    h("h1", {}, "Agents"),
    h("p", {class: "muted"}, ctx.me.admin ? "Every declared agent with memory." :
      `You are signed in as agent ${ctx.me.agent}: its own memory, its teams' and the swarm's.`),
    table("Agents with memory", ["Agent", "Memories", "By type", "By scope", "By source", "Last activity",
      "Decay", "Soon"], rows, {class: "agents"}),
    broken.length ? [h("h2", {}, "Broken agent files"),
      h("p", {class: "muted"}, "A broken file declares nothing until it is fixed."),
      table("Agent files with problems", ["File", "Problem"],
        broken.map((a) => [a.name, h("ul", {}, a.problems.map((p) => h("li", {}, p)))]))] : null);
}

function memoryRows(agent, items) {
  return items.map((m) => [
    h("a", {href: memoryPath(agent, m.id), class: "content"}, m.content),
    badge(m.type), badge(scopeName(m.scope), "scope"), num(m.confidence), when(m.created_at)]);
}

// How many memories each usage table lists.
const USAGE_ROWS = 10;

function usageRows(agent, items) {
  return items.map((m) => [
    h("a", {href: memoryPath(agent, m.id), class: "content"}, m.content),
    String(m.shown), String(m.used), m.ratio === null ? "—" : num(m.ratio)]);
}

async function one(ctx) {
  const [name] = ctx.params;
  const cursor = ctx.query.get("cursor");
  const [declared, o, page, useful, unused] = await Promise.all([
    ctx.agents(),
    ctx.api("GET", `${agentPath(name)}/overview`),
    ctx.api("GET", `${agentPath(name)}/list${query({limit: PAGE, cursor})}`),
    ctx.api("GET", `${agentPath(name)}/usage/memories${query({order: "used", limit: USAGE_ROWS})}`),
    ctx.api("GET", `${agentPath(name)}/usage/memories${query({order: "unused", limit: USAGE_ROWS})}`),
  ]);
  const d = declared.find((a) => a.name === name) || {};
  return h("section", {},
    h("h1", {}, name),
    d.description ? h("p", {}, d.description) : null,
    h("section", {"aria-labelledby": "glance"},
      h("h2", {id: "glance"}, "At a glance"),
      facts([
        ["Memories", String(o.total)],
        ["By type", counts(o.by_type)],
        ["By scope", byScope(o.by_scope)],
        ["By source", counts(o.by_source)],
        ["Last activity", activity(o.last_activity)],
        ["Decay", decay(o.decay, o.total)],
        ["Expiring within a week", String(o.expiring_soon)],
        ["Due for the prune at its next agent_end", String(o.prune_due)],
        ["Never shown / never used", `${o.never_shown} / ${o.never_used}`],
        ["Mean confidence", o.mean_confidence === null ? "—" : num(o.mean_confidence)],
        ["Teams", d.teams && d.teams.length ? d.teams.join(", ") : "none"],
        ["Leads its teams", d.lead ? "yes" : "no"],
        ["Project", d.project || "all"],
      ])),
    h("section", {"aria-labelledby": "useful"},
      h("h2", {id: "useful"}, "Proved useful"),
      h("p", {class: "muted"}, "Its own memories its later work drew on after a start showed them (cited, repeated ",
        "or applied in other words), most uses first; and those shown again and again that it never used."),
      useful.length ? table("Memories that proved useful", ["Content", "Shown", "Used", "Used per showing"],
        usageRows(name, useful), {class: "usage"}) : h("p", {}, "No memory used yet."),
      unused.length ? table("Memories shown and never used", ["Content", "Shown", "Used", "Used per showing"],
        usageRows(name, unused), {class: "usage"}) : null),
    h("section", {"aria-labelledby": "memories"},
      h("h2", {id: "memories"}, "Memories"),
      h("p", {class: "muted"}, "Newest first, every scope it reads, ", String(PAGE), " at a time.",
        " ", h("a", {href: `/sessions?agent=${encodeURIComponent(name)}`}, "Its sessions")),
      page.items.length ? table(cursor ? "Memories (a later page)" : "Memories (the newest)",
        ["Content", "Type", "Scope", "Confidence", "Created"], memoryRows(name, page.items), {class: "memories"})
        : h("p", {}, "No memory yet."),
      h("nav", {"aria-label": "Pages", class: "pager"},
        cursor ? h("a", {href: agentPath(name)}, "First page") : null,
        page.next_cursor ? h("a", {href: `${agentPath(name)}${query({cursor: page.next_cursor})}`, rel: "next"},
          "Next page") : null)));
}

export const routes = [
  {path: /^\/agents$/, title: "Agents", render: list},
  {path: /^\/agents\/([^/]+)$/, title: (ctx) => ctx.params[0], render: one},
];
