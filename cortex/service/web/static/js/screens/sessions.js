// The Sessions screens: every session of an agent (newest first) and one session: the exact <agent-memory>
// block each of its starts injected, which of those memories its output then used, what it added and changed
// (a memory diff) and where its transcript is. Reads GET /v1/agents/{agent}/sessions and .../sessions/{id}.
import {query} from "../api.js";
import {badge, facts, h, memoryPath, table, when} from "../dom.js";

const PAGE = 50;

/** The path of a session's screen. */
export function sessionPath(agent, session) {
  return `/sessions/${encodeURIComponent(agent)}/${encodeURIComponent(session)}`;
}

/** A session id as the list shows it: its first 8 characters when it is long (the full id is its title). */
function shortId(session) {
  return session.length > 12 ? `${session.slice(0, 8)}…` : session;
}

/** A memory's text as a link to its detail (cut when long: the detail has all of it). */
function memoryLink(agent, memory) {
  const text = memory.content === null || memory.content === undefined ? null : memory.content;
  if (text === null) return h("span", {}, h("code", {}, memory.id), " ", h("span", {class: "muted"}, "(gone)"));
  const shown = text.length > 240 ? `${text.slice(0, 240)}…` : text;
  return h("a", {href: memoryPath(agent, memory.id), class: "content"}, shown);
}

async function sessionAgents(ctx) {
  if (!ctx.me.admin) return [ctx.me.agent];
  const agents = await ctx.agents();
  return agents.filter((a) => a.memory_enabled && !(a.problems || []).length).map((a) => a.name);
}

function agentFilter(ctx, names, chosen) {
  const select = h("select", {id: "sessions-agent", name: "agent"},
    h("option", {value: "", selected: !chosen}, "All agents"),
    names.map((name) => h("option", {value: name, selected: name === chosen}, name)));
  select.addEventListener("change", () => ctx.navigate(`/sessions${query({agent: select.value})}`));
  return h("div", {class: "toolbar"}, h("div", {}, h("label", {for: "sessions-agent"}, "Agent"), select));
}

function sessionRows(items) {
  return items.map((s) => [
    h("a", {href: sessionPath(s.agent, s.session), title: s.session}, shortId(s.session)),
    s.agent,
    when(s.started_at),
    s.task ? h("span", {class: "content"}, s.task.length > 160 ? `${s.task.slice(0, 160)}…` : s.task)
      : h("span", {class: "muted"}, "—"),
    `${s.shown} / ${s.used}`,
    `${s.added} / ${s.changed}`,
    s.transcripts.length ? s.transcripts.map((t) => h("code", {class: "path"}, t)) : h("span", {class: "muted"}, "—"),
  ]);
}

async function renderList(ctx) {
  const names = await sessionAgents(ctx);
  const chosen = ctx.me.admin ? (ctx.query.get("agent") || "") : ctx.me.agent;
  if (chosen && !names.includes(chosen)) throw Object.assign(new Error(`No agent ${chosen} with memory`), {status: 404});
  const cursor = ctx.query.get("cursor") || "";
  let items = [];
  let next = null;
  if (chosen) {
    const page = await ctx.api("GET", `/agents/${encodeURIComponent(chosen)}/sessions${query({limit: PAGE, cursor})}`);
    items = page.items;
    next = page.next_cursor;
  } else {
    const pages = await Promise.all(names.map((name) =>
      ctx.api("GET", `/agents/${encodeURIComponent(name)}/sessions${query({limit: PAGE})}`)));
    const all = pages.flatMap((p) => p.items);
    all.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
    items = all.slice(0, PAGE);
  }
  return h("section", {class: "sessions"},
    h("h1", {}, "Sessions"),
    h("p", {class: "muted"}, "Each session an agent started with a session id (a hook's, or the Cortex-Session ",
      "header): the block it was shown, what it used, and what it added or changed."),
    ctx.me.admin ? agentFilter(ctx, names, chosen) : null,
    items.length
      ? table(chosen ? `Sessions of ${chosen}, newest first` : "Sessions of every agent, newest first",
        ["Session", "Agent", "Started", "Task", "Shown / used", "Added / changed", "Transcript"], sessionRows(items))
      : h("p", {role: "status"}, "No session on record yet."),
    next ? h("p", {}, h("a", {href: `/sessions${query({agent: chosen, cursor: next})}`}, "Older sessions")) : null,
    !chosen && items.length ? h("p", {class: "muted"}, "Choose an agent to page through all of its sessions.") : null);
}

function blockSection(detail) {
  const starts = detail.starts;
  const body = starts.length ? starts.map((start, n) => h("div", {class: "start"},
    starts.length > 1 ? h("h3", {}, `Start ${detail.info.starts - starts.length + n + 1} `, when(start.at),
      start.touched ? null : " (shown again)") : null,
    start.task ? h("p", {}, h("span", {class: "muted"}, "Task: "), h("span", {class: "content"}, start.task)) : null,
    start.block ? h("pre", {class: "block", tabindex: "0"}, start.block)
      : h("p", {class: "muted"}, "Nothing was injected: no memory matched."),
    start.cut ? h("p", {class: "muted"}, "The block was longer than the record keeps: shortened.") : null))
    : [h("p", {class: "muted"}, "No start of this session is on record (it used or captured only).")];
  return h("section", {"aria-labelledby": "session-block"}, h("h2", {id: "session-block"}, "Block"), body);
}

function usedSection(agent, detail) {
  const shown = detail.shown;
  const used = shown.filter((m) => m.used);
  return h("section", {"aria-labelledby": "session-used"},
    h("h2", {id: "session-used"}, "Used"),
    h("p", {}, `${used.length} of the ${shown.length} memories shown were used.`),
    shown.length ? table("Memories shown at its start, and which its output used", ["Memory", "Scope", "Used"],
      shown.map((m) => [memoryLink(agent, m), badge(m.scope),
        m.used ? h("span", {class: "ok"}, `Used (${m.used})`) : h("span", {class: "muted"}, "Not used")]))
      : null);
}

function changesSection(agent, detail) {
  const change = (m) => {
    const cells = [memoryLink(agent, m), m.action, when(m.at)];
    if (m.before !== null || m.after !== null) {
      cells.push(h("div", {class: "diff"},
        m.before !== null ? h("p", {}, h("span", {class: "muted"}, "Before: "), h("del", {class: "content"}, m.before)) : null,
        m.after !== null ? h("p", {}, h("span", {class: "muted"}, "After: "), h("ins", {class: "content"}, m.after)) : null));
    } else {
      cells.push(h("span", {class: "muted"}, "—"));
    }
    return cells;
  };
  return h("section", {"aria-labelledby": "session-changes"},
    h("h2", {id: "session-changes"}, "Changes"),
    h("h3", {}, `Added (${detail.created.length})`),
    detail.created.length
      ? h("ul", {class: "added"}, detail.created.map((m) => h("li", {}, memoryLink(agent, m), " ", badge(m.scope))))
      : h("p", {class: "muted"}, "No memory was added in this session."),
    h("h3", {}, `Changed (${detail.changed.length})`),
    detail.changed.length
      ? table("Memories changed in this session", ["Memory", "Change", "When", "Content before and after"],
        detail.changed.map(change))
      : h("p", {class: "muted"}, "No memory was changed in this session."));
}

function transcriptSection(detail) {
  const paths = detail.info.transcripts;
  return h("section", {"aria-labelledby": "session-transcript"},
    h("h2", {id: "session-transcript"}, "Transcript"),
    paths.length ? h("ul", {}, paths.map((p) => h("li", {}, h("code", {class: "path"}, p))))
      : h("p", {class: "muted"}, "No transcript is on record for this session (one is once a hook or a capture reads it)."));
}

async function renderOne(ctx) {
  const [agent, session] = ctx.params;
  const detail = await ctx.api("GET", `/agents/${encodeURIComponent(agent)}/sessions/${encodeURIComponent(session)}`);
  const info = detail.info;
  return h("section", {class: "session"},
    h("p", {}, h("a", {href: `/sessions${ctx.me.admin ? query({agent}) : ""}`}, "All sessions")),
    h("h1", {class: "content"}, `Session ${info.session}`),
    facts([
      ["Agent", info.agent],
      ["Started", when(info.started_at)],
      ["Task", info.task ? h("span", {class: "content"}, info.task) : h("span", {class: "muted"}, "—")],
      ["Starts", String(info.starts)],
      ["Shown / used", `${info.shown} / ${info.used}`],
      ["Added / changed", `${info.added} / ${info.changed}`],
    ]),
    blockSection(detail),
    usedSection(agent, detail),
    changesSection(agent, detail),
    transcriptSection(detail));
}

export const routes = [
  {path: /^\/sessions$/, title: "Sessions", render: renderList},
  {path: /^\/sessions\/([^/]+)\/([^/]+)$/, title: (ctx) => `Session ${ctx.params[1]}`, render: renderOne},
];
