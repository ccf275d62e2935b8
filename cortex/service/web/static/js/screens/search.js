// Search: /search?q=...&agent=...&mode=...&type=...&project=...&tags=...&scope=...&as_of=...
// The query and filters live in the URL (a reload or a shared link shows the same hits); each hit links to its
// detail and can show why it ranked: the parts of its score (GET /v1/agents/{agent}/search?explain=true).

import {query} from "../api.js";
import {badge, h, memoryPath, num, problem, replace, when} from "../dom.js";

const MODES = ["hybrid", "bm25", "semantic", "all"];
const TYPES = ["", "pattern", "convention", "insight", "decision"];
const PARTS = [["lexical", "Lexical"], ["semantic", "Semantic"], ["recency", "Recency"], ["usage", "Usage"],
  ["confidence", "Confidence"], ["fused", "Fused"]];
const FIELDS = ["agent", "q", "mode", "type", "project", "tags", "scope", "as_of"];

function field(id, label, control) {
  return h("div", {}, h("label", {for: id}, label), control);
}

function select(id, name, options, value) {
  return h("select", {id, name}, options.map(([v, text]) => h("option", {value: v, selected: v === value}, text)));
}

function why(hit) {
  const parts = hit.explain || {};
  const id = `why-${hit.memory.id}`;
  const panel = h("div", {id, class: "why", hidden: true},
    h("table", {class: "explain"},
      h("caption", {}, `Why it ranked: score ${num(hit.score, 4)}`),
      h("thead", {}, h("tr", {}, h("th", {scope: "col"}, "Part"), h("th", {scope: "col"}, "Value"),
        h("th", {scope: "col"}, "Share"))),
      h("tbody", {}, PARTS.filter(([key]) => key in parts).map(([key, label]) => {
        const value = Number(parts[key]) || 0;
        return h("tr", {}, h("th", {scope: "row"}, label), h("td", {}, num(value, 4)),
          h("td", {}, h("meter", {min: "0", max: "1", value: String(Math.max(0, Math.min(1, value))),
            "aria-label": `${label} ${num(value, 4)}`})));
      }))));
  const button = h("button", {type: "button", class: "link", "aria-expanded": "false", "aria-controls": id},
    "Why it ranked");
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    panel.hidden = !open;
  });
  return [button, panel];
}

function hitView(agent, hit) {
  const m = hit.memory;
  return h("li", {class: "hit"},
    h("a", {href: memoryPath(agent, m.id), class: "content"}, m.content),
    h("div", {class: "meta"}, badge(m.type), badge(m.scope, "scope"), ` confidence ${num(m.confidence)} · `,
      when(m.created_at), m.tags && m.tags.length ? [" · ", m.tags.map((t) => badge(t, "tag"))] : null),
    why(hit));
}

async function screen(ctx) {
  const params = Object.fromEntries(FIELDS.map((k) => [k, ctx.query.get(k) || ""]));
  const agents = ctx.me.admin ? (await ctx.agents()).filter((a) => a.memory_enabled && !a.problems.length) : [];
  const agent = ctx.me.admin ? (params.agent || (agents[0] && agents[0].name) || "") : ctx.me.agent;
  const box = h("input", {id: "search-q", name: "q", type: "search", value: params.q, autocomplete: "off",
    placeholder: "What do you want to find?"});
  const controls = [
    ctx.me.admin ? field("search-agent", "Agent", select("search-agent", "agent",
      agents.map((a) => [a.name, a.name]), agent)) : null,
    field("search-mode", "Mode", select("search-mode", "mode", MODES.map((m) => [m, m]), params.mode || "hybrid")),
    field("search-type", "Type", select("search-type", "type", TYPES.map((t) => [t, t || "any"]), params.type)),
    field("search-project", "Project", h("input", {id: "search-project", name: "project", value: params.project})),
    field("search-tags", "Tags", h("input", {id: "search-tags", name: "tags", value: params.tags,
      placeholder: "comma separated"})),
    field("search-scope", "Scope", h("input", {id: "search-scope", name: "scope", value: params.scope,
      placeholder: "agent, team:NAME or swarm"})),
    field("search-as-of", "As of", h("input", {id: "search-as-of", name: "as_of", type: "date", value: params.as_of})),
  ];
  const form = h("form", {role: "search", class: "search", "aria-label": "Search memories"},
    h("div", {class: "searchbox"}, h("label", {for: "search-q"}, "Search"), box,
      h("button", {type: "submit", class: "primary"}, "Search")),
    h("div", {class: "toolbar"}, controls));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = {};
    for (const key of FIELDS) {
      const value = key === "agent" && !ctx.me.admin ? "" : String(data.get(key) || "").trim();
      if (value) next[key] = value;
    }
    if (next.mode === "hybrid") delete next.mode;
    ctx.navigate(`/search${query(next)}`);
  });
  const results = h("div", {class: "results", "aria-live": "polite"});
  if (!params.q) {
    replace(results, h("p", {role: "status", class: "muted"}, "Type what you are looking for and press Enter."));
  } else if (!agent) {
    replace(results, h("p", {role: "status"}, "No agent with memory to search."));
  } else {
    try {
      const tags = params.tags ? params.tags.split(",").map((t) => t.trim()).filter(Boolean) : [];
      const asOf = params.as_of ? `${params.as_of}T23:59:59Z` : "";
      const found = await ctx.api("GET", `/agents/${encodeURIComponent(agent)}/search${query({
        query: params.q, mode: params.mode || "hybrid", type: params.type, project: params.project, tags,
        scope: params.scope, as_of: asOf, explain: "true", limit: 20})}`);
      replace(results,
        h("p", {role: "status"}, `${found.hits.length} hit${found.hits.length === 1 ? "" : "s"} for "${params.q}"`,
          ` in ${agent}'s memory (${found.mode})`),
        found.note ? h("p", {class: "muted"}, found.note) : null,
        found.hits.length ? h("ol", {class: "hits"}, found.hits.map((hit) => hitView(agent, hit)))
          : h("p", {}, "Nothing matches: try fewer words, another mode or fewer filters."));
    } catch (error) {
      replace(results, problem(error));
    }
  }
  return h("section", {}, h("h1", {}, "Search"), form, results);
}

export const routes = [
  {path: /^\/search$/, title: (ctx) => (ctx.query.get("q") ? `Search: ${ctx.query.get("q")}` : "Search"), render: screen},
];
