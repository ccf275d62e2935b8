// A memory's detail: /memories/<agent>/<id>. Its fields, its History (every version, the supersession chain),
// its Provenance (PROV-O: which activity wrote it, in which session, through which surface; a small graph), and
// the actions validate, edit, supersede and forget, each through the API route every client uses.

import {ApiError} from "../api.js";
import {badge, confirmDialog, facts, h, memoryPath, num, problem, replace, s, table, when} from "../dom.js";

const TYPES = ["pattern", "convention", "insight", "decision"];

function base(agent, id) {
  return `/agents/${encodeURIComponent(agent)}/memories/${encodeURIComponent(id)}`;
}

function link(agent, id, label) {
  return h("a", {href: memoryPath(agent, id)}, label || id);
}

function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function metadataList(metadata) {
  if (!metadata || typeof metadata !== "object" || !Object.keys(metadata).length) return h("span", {class: "muted"}, "none");
  return h("dl", {class: "facts"}, Object.entries(metadata).map(([k, v]) => [h("dt", {}, k), h("dd", {}, json(v))]));
}

function fields(m) {
  return facts([
    ["Type", badge(m.type)],
    ["Scope", m.scope],
    ["Project", m.project],
    ["Confidence", num(m.confidence)],
    ["Usage", [`shown ${m.usage_count} times, used ${m.used_count || 0} times; last used `, when(m.last_used_at)]],
    ["Tags", m.tags && m.tags.length ? m.tags.map((t) => badge(t, "tag")) : h("span", {class: "muted"}, "none")],
    ["Source", m.source],
    ["Author", m.author || "—"],
    ["Version", String(m.version)],
    ["Created", when(m.created_at)],
    ["Updated", when(m.updated_at)],
    ["Validated", when(m.validated_at)],
    ["Valid", [when(m.valid_from), " – ", m.valid_until ? when(m.valid_until) : "now"]],
    ["Expires", m.expires_at ? when(m.expires_at) : "never"],
    ["Metadata", metadataList(m.metadata)],
  ]);
}

// the supersession chain around the memory: older ones (what each superseded, from its provenance) and newer
// ones (what superseded each), a few steps each way; a memory that cannot be read ends the walk
const CHAIN_STEPS = 6;

async function chainOf(ctx, agent, m, prov) {
  const older = [];
  let from = prov.derived_from;
  while (from.length === 1 && older.length < CHAIN_STEPS) {
    try {
      const [before, its] = await Promise.all([ctx.api("GET", base(agent, from[0])),
        ctx.api("GET", `${base(agent, from[0])}/provenance`)]);
      if (before.superseded_by !== (older.length ? older[0].id : m.id)) break;  // merged, not superseded
      older.unshift(before);
      from = its.derived_from;
    } catch (_) { break; }
  }
  const newer = [];
  let next = m.superseded_by;
  while (next && newer.length < CHAIN_STEPS) {
    try {
      const after = await ctx.api("GET", base(agent, next));
      newer.push(after);
      next = after.superseded_by;
    } catch (_) { break; }
  }
  return [...older, m, ...newer];
}

function chainList(agent, m, chain) {
  if (chain.length < 2) return h("p", {class: "muted"}, "It has not superseded a memory and nothing superseded it.");
  return h("section", {"aria-labelledby": "chain-title"},
    h("h3", {id: "chain-title"}, "Supersession chain, oldest first"),
    h("ol", {class: "chain"}, chain.map((c) => h("li", c.id === m.id ? {"aria-current": "true"} : {},
      c.id === m.id ? h("strong", {}, "This memory") : link(agent, c.id),
      ": ", h("span", {class: "content"}, c.content.length > 160 ? `${c.content.slice(0, 160)}…` : c.content),
      " · valid ", when(c.valid_from), " – ", c.valid_until ? when(c.valid_until) : "now",
      c.superseded_reason ? ` · replaced because: ${c.superseded_reason}` : ""))));
}

function historySection(agent, m, versions, prov, chain) {
  return h("section", {"aria-labelledby": "history"},
    h("h2", {id: "history"}, "History"),
    facts([
      ["Supersedes", prov.derived_from.length ? prov.derived_from.map((id) => [link(agent, id), " "]) : "nothing"],
      ["Superseded by", m.superseded_by ? [link(agent, m.superseded_by),
        m.superseded_reason ? ` (${m.superseded_reason})` : ""] : "nothing (current)"],
    ]),
    chainList(agent, m, chain),
    table("Every version, oldest first", ["Version", "Content", "Type", "Confidence", "Tags", "Valid from",
      "Valid until", "Recorded"],
    versions.map((v) => [String(v.version), h("span", {class: "content"}, v.content), v.type, num(v.confidence),
      (v.tags || []).join(", "), when(v.valid_from), v.valid_until ? when(v.valid_until) : "—",
      when(v.updated_at)])));
}

// memory -> activity -> agent, with what it was derived from and what superseded it; drawn as an image whose
// title and description say the same (full ids), beside the facts that link each memory
const BOX = {width: 170, height: 30};

function short(text, size = 22) {
  return text.length > size ? `${text.slice(0, size - 1)}…` : text;
}

function graph(agent, m, prov) {
  const gen = prov.generated_by;
  const memoryNode = (key, id, x, y) => ({key, name: `memory ${id}`, label: short(`memory ${id}`), x, y});
  const nodes = [memoryNode("memory", m.id, 235, 110)];
  const edges = [];
  if (gen) {
    const name = `${gen.surface || "activity"}${gen.event ? " " + gen.event : ""} activity`;
    nodes.push({key: "activity", name, label: short(name), x: 235, y: 10});
    edges.push(["memory", "activity", "wasGeneratedBy"]);
  }
  const actor = (gen && gen.associated_with) || prov.attributed_to;
  if (actor) {
    nodes.push({key: "agent", name: `agent ${actor}`, label: short(`agent ${actor}`), x: 460, y: 10});
    if (gen) edges.push(["activity", "agent", "wasAssociatedWith"]);
  }
  if (prov.attributed_to && prov.attributed_to === actor) {
    edges.push(["memory", "agent", "wasAttributedTo"]);
  } else if (prov.attributed_to) {
    const name = `agent ${prov.attributed_to}`;
    nodes.push({key: "author", name, label: short(name), x: 460, y: 110});
    edges.push(["memory", "author", "wasAttributedTo"]);
  }
  prov.derived_from.slice(0, 3).forEach((id, i) => {
    nodes.push(memoryNode(`from${i}`, id, 10, 60 + 60 * i));
    edges.push(["memory", `from${i}`, "wasDerivedFrom"]);
  });
  if (prov.derived_from.length > 3) {
    nodes.push({key: "more", name: `${prov.derived_from.length - 3} more memories`,
      label: `+ ${prov.derived_from.length - 3} more`, x: 10, y: 240});
    edges.push(["memory", "more", "wasDerivedFrom"]);
  }
  if (prov.superseded_by) {
    nodes.push(memoryNode("next", prov.superseded_by, 460, 200));
    edges.push(["next", "memory", "supersedes"]);
  }
  const at = Object.fromEntries(nodes.map((n) => [n.key, n]));
  const height = Math.max(160, ...nodes.map((n) => n.y + BOX.height + 10));
  const description = edges.map(([a, b, label]) => `${at[a].name} ${label} ${at[b].name}`).join("; ");
  const cx = (n) => n.x + BOX.width / 2, cy = (n) => n.y + BOX.height / 2;
  return s("svg", {viewBox: `0 0 640 ${height}`, width: "640", height: String(height), role: "img",
    "aria-labelledby": "prov-graph-title prov-graph-desc", class: "prov-graph"},
  s("title", {id: "prov-graph-title"}, "Provenance graph"),
  s("desc", {id: "prov-graph-desc"}, description),
  edges.map(([a, b]) => s("line", {x1: cx(at[a]), y1: cy(at[a]), x2: cx(at[b]), y2: cy(at[b])})),
  nodes.map((n) => s("g", {class: `node ${n.key}`},
    s("rect", {x: n.x, y: n.y, width: BOX.width, height: BOX.height, rx: 6}),
    s("text", {x: cx(n), y: n.y + 19, "text-anchor": "middle"}, n.label))),
  // the edges' names last, over the lines and boxes, each on a halo
  edges.map(([a, b, label]) => s("text", {class: "edge", x: (cx(at[a]) + cx(at[b])) / 2,
    y: (cy(at[a]) + cy(at[b])) / 2 + 4, "text-anchor": "middle"}, label)));
}

function provenanceSection(agent, m, prov) {
  const gen = prov.generated_by || {};
  const run = gen.run;
  const imported = m.metadata && m.metadata.import;
  return h("section", {"aria-labelledby": "provenance"},
    h("h2", {id: "provenance"}, "Provenance"),
    facts([
      ["Written by", prov.attributed_to || "—"],
      ["Done by", gen.associated_with || prov.attributed_to || "—"],
      ["Source", m.source],
      ["Activity", gen.activity || "—"],
      ["Surface", gen.surface || "—"],
      ["Hook event", gen.event || "—"],
      ["Session", gen.session ? h("a", {href: `/sessions/${encodeURIComponent(agent)}/${encodeURIComponent(gen.session)}`},
        gen.session) : "—"],
      ["Tool", gen.tool || "—"],
      ["Channel", gen.channel || "—"],
      ["File", gen.file ? [h("code", {}, gen.file), gen.part ? ` (${gen.part})` : ""] : "—"],
      ["Model", gen.model || "—"],
      ["Import", imported ? json(imported) : (m.source === "import" ? "imported" : "—")],
      ["Consolidation run", run ? h("a", {href: "/runs"}, run) : "—"],
      ["When", when(gen.started_at)],
      ["Derived from", prov.derived_from.length ? prov.derived_from.map((id) => [link(agent, id), " "]) : "—"],
      ["Superseded by", prov.superseded_by ? link(agent, prov.superseded_by) : "—"],
      ["Earlier versions", prov.versions.length ? prov.versions.map(String).join(", ") : "—"],
    ]),
    graph(agent, m, prov),
    prov.changes.length ? table("Changes since it was written", ["When", "Action", "By", "Surface", "Session", "Why"],
      prov.changes.map((c) => [when(c.started_at), c.action, c.associated_with || "—", c.surface || "—",
        c.session || "—", c.rule || ""])) : h("p", {class: "muted"}, "No change since it was written."));
}

// the API's refusal, said as such (a member changing a team memory only its author or a lead may change)
function refused(error) {
  if (error instanceof ApiError && error.status === 403) {
    return h("p", {class: "error", role: "alert"}, `Not allowed: ${error.message}`);
  }
  return problem(error);
}

function editForm(ctx, agent, m, status) {
  const content = h("textarea", {id: "edit-content", name: "content", required: true}, m.content);
  const type = h("select", {id: "edit-type", name: "type"},
    TYPES.map((t) => h("option", {value: t, selected: t === m.type}, t)));
  const confidence = h("input", {id: "edit-confidence", name: "confidence", type: "number", min: "0", max: "1",
    step: "0.05", value: String(m.confidence)});
  const tags = h("input", {id: "edit-tags", name: "tags", value: (m.tags || []).join(", ")});
  const form = h("form", {class: "edit", "aria-labelledby": "edit-title", dataset: {busy: "edit"}},
    h("h2", {id: "edit-title"}, "Edit"),
    h("div", {}, h("label", {for: "edit-content"}, "Content"), content),
    h("div", {class: "toolbar"},
      h("div", {}, h("label", {for: "edit-type"}, "Type"), type),
      h("div", {}, h("label", {for: "edit-confidence"}, "Confidence"), confidence),
      h("div", {}, h("label", {for: "edit-tags"}, "Tags"), tags)),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Save"),
      h("button", {type: "button", onclick: () => form.remove()}, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await ctx.api("PATCH", base(agent, m.id), {content: content.value, type: type.value,
        confidence: Number(confidence.value), expected_version: m.version,
        tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean)});
      await ctx.refresh();
      say(ctx, `Saved: version ${m.version + 1}.`);
    } catch (error) {
      if (error.status === 409) {
        replace(status, h("div", {class: "error", role: "alert"},
          `Not saved: the memory changed since you opened it (${error.message}). `,
          h("button", {type: "button", onclick: () => ctx.refresh()}, "Reload the memory")));
      } else {
        replace(status, refused(error));
      }
    }
  });
  return form;
}

function supersedeForm(ctx, agent, m, status) {
  const content = h("textarea", {id: "supersede-content", name: "content", required: true});
  const reason = h("input", {id: "supersede-reason", name: "reason"});
  const form = h("form", {class: "supersede", "aria-labelledby": "supersede-title", dataset: {busy: "supersede"}},
    h("h2", {id: "supersede-title"}, "Supersede"),
    h("p", {class: "muted"}, "The new memory replaces this one; this one stays in the history, valid until now."),
    h("div", {}, h("label", {for: "supersede-content"}, "New content"), content),
    h("div", {}, h("label", {for: "supersede-reason"}, "Reason"), reason),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Supersede with this"),
      h("button", {type: "button", onclick: () => form.remove()}, "Cancel")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const made = await ctx.api("POST", `${base(agent, m.id)}/supersede`,
        {content: content.value, reason: reason.value || null});
      await ctx.navigate(memoryPath(agent, made.id));
      say(ctx, "Superseded: this is the new memory.");
    } catch (error) {
      replace(status, refused(error));
    }
  });
  return form;
}

// what the last action said, in the status (data-keep: the live update of the action's own write keeps it, app.js)
function say(ctx, message) {
  const box = ctx.main.querySelector("#memory-status");
  if (box) replace(box, h("p", {class: "ok"}, message));
}

function actions(ctx, agent, m, status, forms) {
  const open = (make) => () => {
    replace(forms, make(ctx, agent, m, status));
    forms.querySelector("textarea, input").focus();
  };
  return h("div", {class: "actions", role: "group", "aria-label": "Actions"},
    h("button", {type: "button", onclick: async () => {
      try {
        const after = await ctx.api("POST", `${base(agent, m.id)}/validate`);
        await ctx.refresh();
        say(ctx, `Validated: confidence ${num(after.confidence)}.`);
      } catch (error) { replace(status, refused(error)); }
    }}, "Validate"),
    h("button", {type: "button", onclick: open(editForm)}, "Edit"),
    h("button", {type: "button", onclick: open(supersedeForm)}, "Supersede"),
    h("button", {type: "button", class: "danger", onclick: async () => {
      const sure = await confirmDialog("Forget this memory?",
        `"${m.content.slice(0, 120)}" is deleted for good (its history too).`, "Forget");
      if (!sure) return;
      try {
        await ctx.api("DELETE", base(agent, m.id));
        replace(ctx.main, h("section", {},
          h("h1", {tabindex: "-1"}, "Memory forgotten"),
          h("p", {role: "status"}, `Memory ${m.id} is forgotten.`),
          h("p", {}, h("a", {href: `/agents/${encodeURIComponent(agent)}`}, `Back to ${agent}`))));
        ctx.main.querySelector("h1").focus();
      } catch (error) { replace(status, refused(error)); }
    }}, "Forget"));
}

async function detail(ctx) {
  const [agent, id] = ctx.params;
  let m;
  try {
    m = await ctx.api("GET", base(agent, id));
  } catch (error) {
    if (error instanceof ApiError && [403, 404, 422].includes(error.status)) {
      return h("section", {}, h("h1", {}, "Not found"),
        h("p", {role: "alert"}, "No memory with this id that you may read."));
    }
    throw error;
  }
  const [versions, prov] = await Promise.all([
    ctx.api("GET", `${base(agent, id)}/history`), ctx.api("GET", `${base(agent, id)}/provenance`)]);
  const chain = await chainOf(ctx, agent, m, prov);
  const status = h("div", {id: "memory-status", role: "status", "aria-live": "polite", dataset: {keep: ""}});
  const forms = h("div", {class: "forms"});
  return h("article", {class: "memory", "aria-labelledby": "memory-title"},
    h("h1", {id: "memory-title"}, "Memory ", h("code", {}, m.id)),
    h("p", {class: "muted"}, m.scope === "agent" ? `${m.agent}'s own memory` :
      `A ${m.scope} memory written by ${m.author || m.agent}, read as ${agent}`,
    m.superseded_by ? " · superseded" : "", m.valid_until ? " · no longer valid" : ""),
    h("blockquote", {class: "content"}, m.content),
    actions(ctx, agent, m, status, forms),
    status,
    forms,
    h("section", {"aria-labelledby": "fields"}, h("h2", {id: "fields"}, "Details"), fields(m)),
    historySection(agent, m, versions, prov, chain),
    provenanceSection(agent, m, prov));
}

export const routes = [
  {path: /^\/memories\/([^/]+)\/([^/]+)$/, title: (ctx) => `Memory ${ctx.params[1]}`, render: detail},
];
