// The Runs screen: consolidation runs of the scopes the caller may see, with what each merged, superseded and
// flagged; a dry run, a run and an undo as buttons. Also exports the view of a report the Team screen shows.
import {query} from "../api.js";
import {badge, confirmDialog, facts, h, memoryPath, problem, replace, when} from "../dom.js";

/** The API's parameters of a scope label (`agent:NAME`, `team:NAME`, `swarm`; "" for every scope). */
export function scopeParams(label) {
  if (!label) return {};
  if (label === "swarm") return {swarm: true};
  const [kind, ...rest] = label.split(":");
  return kind === "team" ? {team: rest.join(":")} : {agent: rest.join(":")};
}

/** A label of a scope for a person: "agent alice", "team backend", "the swarm". */
export function scopeName(label) {
  if (!label) return "every scope";
  if (label === "swarm") return "the swarm";
  return label.replace(":", " ");
}

/** A memory id as text, linked to its detail when the caller may read it through an agent. */
function memoryRef(id, reader) {
  const code = h("code", {}, id);
  return reader ? h("a", {href: memoryPath(reader, id)}, code) : code;
}

/** The agent through which the signed-in caller reads the memories of a scope (null: none). */
export function readerOf(me, scope) {
  if (!scope) return null;
  if (scope.startsWith("agent:")) {
    const name = scope.slice(6);
    return me.admin || me.agent === name ? name : null;
  }
  return me.admin ? null : me.agent;
}

function section(title, items, render, level = "h4") {
  if (!items || !items.length) return null;
  return [h(level, {}, `${title} (${items.length})`), h("ul", {}, items.map((item) => h("li", {}, render(item))))];
}

function flaggedItem(item, reader) {
  if (item.kind === "held") {
    return [badge("held"), " ", h("span", {class: "content"}, item.keep_content), " ",
      h("span", {class: "muted"}, `(${item.reason})`)];
  }
  return [badge("contradiction"), " keep ", memoryRef(item.keep, reader), " over ", memoryRef(item.supersede, reader),
    ": ", h("span", {class: "content"}, item.reason),
    item.keep_content ? h("div", {class: "content"}, `kept: ${item.keep_content}`) : null,
    item.supersede_content ? h("div", {class: "content"}, `superseded: ${item.supersede_content}`) : null];
}

/** What a run's details say it merged, superseded and flagged (a RunInfo or a ConsolidationReport). */
function details(run, reader, level = "h4") {
  const merges = run.merges || [];
  const superseded = run.supersessions || run.superseded || [];
  const flagged = run.flagged || [...(run.review || []), ...(run.held || [])];
  return [
    section("Merged", merges, (m) => [memoryRef(m.survivor, reader), " kept; merged ",
      m.merged.map((id, i) => [i ? ", " : "", memoryRef(id, reader)]), ": ", h("span", {class: "content"}, m.reason)],
    level),
    section("Superseded", superseded, (s) => [memoryRef(s.old, reader), " by ", memoryRef(s.new, reader), ": ",
      h("span", {class: "content"}, s.reason)], level),
    section("Flagged for review", flagged, (item) => flaggedItem(item, reader), level),
  ];
}

/** A consolidation report (ConsolidationReport) as a section headed `title`. */
export function reportView(report, title, me) {
  const reader = readerOf(me, report.scope);
  const id = `report-${Math.random().toString(36).slice(2)}`;
  const outcome = report.dry_run ? "Dry run: nothing was written." :
    report.run ? `Run ${report.run} written.` : "Nothing to do: nothing was written.";
  const skipped = Object.entries(report.skipped || {});
  return h("section", {class: "report", "aria-labelledby": id},
    h("h3", {id}, title),
    h("p", {}, outcome),
    facts([["Scope", scopeName(report.scope)], ["For", report.actor], ["Run", report.run || "—"],
      ["Examined", String(report.examined)], ["Model calls", String(report.llm_calls)],
      report.note ? ["Note", report.note] : null]),
    details(report, reader),
    section("Created", report.created, (m) => [memoryRef(m.id, reader), " ", h("span", {class: "content"}, m.content)]),
    section("Confirmed", report.confirmed, (c) => [memoryRef(c.memory_id, reader), ": ", c.reason]),
    section("Evicted", report.evicted, (e) => [memoryRef(e.memory_id, reader), ": ", e.reason]),
    section("Sessions distilled", report.sessions, (s) => h("code", {}, s)),
    section("Dismissed", report.dismissed, (item) => flaggedItem(item, reader)),
    section("Skipped", skipped, ([why, n]) => `${why}: ${n}`),
    section("Pending", report.pending, (p) => p),
    section("Problems", report.problems, (p) => h("span", {class: "content"}, p)));
}

function undoView(report) {
  return h("section", {class: "report", "aria-labelledby": "undo-title"},
    h("h3", {id: "undo-title"}, `Run ${report.run} undone`),
    facts([["Scope", scopeName(report.scope)], ["Restored", String(report.restored.length)],
      ["Removed", String(report.removed.length)], ["Links removed", String(report.unlinked)]]),
    section("Restored", report.restored, (id) => h("code", {}, id)),
    section("Removed", report.removed, (id) => h("code", {}, id)));
}

function counts(run) {
  const parts = [["merged", run.merged], ["superseded", run.superseded], ["created", run.created],
    ["confirmed", run.confirmed], ["evicted", run.evicted], ["sessions", run.sessions]];
  const shown = parts.filter(([, n]) => n).map(([what, n]) => `${n} ${what}`);
  return shown.length ? shown.join(", ") : "no memory changed";
}

/** The scopes the caller may consolidate: [[label, text]] ("" = every scope, for an admin). */
async function scopeChoices(ctx) {
  const agents = (await ctx.agents()).filter((a) => a.memory_enabled && !(a.problems || []).length);
  const teams = [...new Set(agents.flatMap((a) => a.teams || []))].sort();
  if (ctx.me.admin) {
    return [["", "Every scope"], ...agents.map((a) => [`agent:${a.name}`, `agent ${a.name}`]),
      ...teams.map((t) => [`team:${t}`, `team ${t}`]), ["swarm", "the swarm"]];
  }
  const mine = agents.find((a) => a.name === ctx.me.agent);
  const choices = [[`agent:${ctx.me.agent}`, `agent ${ctx.me.agent} (own memory)`]];
  if (mine && mine.lead) {
    choices.push(...(mine.teams || []).map((t) => [`team:${t}`, `team ${t}`]), ["swarm", "the swarm"]);
  }
  return choices;
}

async function render(ctx) {
  const choices = await scopeChoices(ctx);
  const asked = ctx.query.get("scope");
  const scope = choices.some(([value]) => value === asked) ? asked : choices[0][0];
  const select = h("select", {id: "runs-scope", name: "scope"},
    choices.map(([value, text]) => h("option", {value, selected: value === scope}, text)));
  const chooser = h("form", {class: "toolbar"},
    h("div", {}, h("label", {for: "runs-scope"}, "Scope"), select),
    h("button", {type: "submit"}, "Show"));
  chooser.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.navigate(`/runs${query({scope: select.value})}`);
  });
  // data-keep: the report stays when the live update of the run itself re-renders the screen (app.js)
  const result = h("div", {id: "runs-result", role: "status", "aria-live": "polite", class: "result",
    dataset: {keep: ""}});
  const list = h("div", {});
  const busy = (button, work) => async () => {
    button.disabled = true;
    try { await work(); } catch (error) { replace(result, problem(error)); } finally { button.disabled = false; }
  };

  async function load() {
    const runs = await ctx.api("GET", `/consolidate/runs${query(scopeParams(scope))}`);
    if (!runs.length) {
      replace(list, h("p", {}, `No consolidation run of ${scopeName(scope)} yet.`));
      return;
    }
    const rows = runs.map((run) => {
      const idCell = h("code", {id: `run-${run.run}`}, run.run);
      let state;
      if (run.undone_at) {
        state = h("span", {}, "undone ", when(run.undone_at));
      } else {
        const undo = h("button", {type: "button", "aria-describedby": `run-${run.run}`}, "Undo");
        undo.addEventListener("click", busy(undo, async () => {
          const sure = await confirmDialog(`Undo run ${run.run}?`, "Every memory it changed goes back as it was " +
            "and the memories it created are removed; its record stays, marked undone.", "Undo run");
          if (!sure) { undo.focus(); return; }
          const report = await ctx.api("POST", "/consolidate/undo", {run: run.run, ...scopeParams(run.scope)});
          replace(result, undoView(report));
          await load();
        }));
        state = undo;
      }
      return h("tr", {},
        h("th", {scope: "row"}, idCell),
        h("td", {}, scopeName(run.scope)),
        h("td", {}, run.kind),
        h("td", {}, run.actor || "—"),
        h("td", {}, when(run.started_at)),
        h("td", {}, counts(run), run.note ? h("div", {class: "muted"}, run.note) : null,
          details(run, readerOf(ctx.me, run.scope), "h3")),
        h("td", {}, state));
    });
    replace(list, h("table", {class: "runs"},
      h("caption", {}, `Consolidation runs of ${scopeName(scope)}, latest first`),
      h("thead", {}, h("tr", {}, ["Run", "Scope", "Kind", "For", "Started", "What it did", "Undo"].map(
        (t) => h("th", {scope: "col"}, t)))),
      h("tbody", {}, rows)));
  }

  const dry = h("button", {type: "button", disabled: !scope}, "Dry run");
  const real = h("button", {type: "button", class: "primary", disabled: !scope}, "Run");
  dry.addEventListener("click", busy(dry, async () => {
    const report = await ctx.api("POST", "/consolidate", {...scopeParams(scope), dry_run: true});
    replace(result, reportView(report, `Dry run of ${scopeName(scope)}: what a run would do`, ctx.me));
  }));
  real.addEventListener("click", busy(real, async () => {
    const report = await ctx.api("POST", "/consolidate", {...scopeParams(scope)});
    replace(result, reportView(report, `Run of ${scopeName(scope)}`, ctx.me));
    await load();
  }));
  await load();
  return h("section", {},
    h("h1", {}, "Runs"),
    h("p", {}, "Consolidation merges near duplicates, supersedes or flags contradictions and distils sessions; " +
      "it never deletes, and every run can be undone."),
    chooser,
    h("h2", {}, `Consolidate ${scopeName(scope)}`),
    scope ? null : h("p", {class: "muted"}, "Choose one scope to consolidate it."),
    h("div", {class: "actions"}, dry, real),
    result,
    h("h2", {}, "Runs"),
    list);
}

export const routes = [
  {path: /^\/runs$/, title: "Runs", render},
];
