// The Review screen: every item the signed-in caller may review (GET /v1/review/all): contradictions consolidation
// left for review (both memories side by side, which one it would keep, why) and memories held for review (what an
// automatic channel would have written where it reaches other agents: content, scope, origin, why held), each with
// its run and the buttons "Approve" and "Reject" (POST /v1/review: accept true / false) where the caller may decide.
import {facts, h, memoryPath, problem, replace} from "../dom.js";

export const routes = [
  {path: /^\/review$/, title: "Review", render},
];

/** How a scope label reads: "agent:alice" → "alice's memory". */
function scopeName(scope) {
  if (scope === "swarm") return "the swarm's memory";
  const [kind, name] = String(scope).split(/:(.*)/s);
  return kind === "team" ? `team ${name}'s memory` : `${name}'s memory`;
}

/** The agent / team / swarm arguments POST /v1/review takes for a scope label. */
function scopeArgs(scope) {
  if (scope === "swarm") return {swarm: true};
  const [kind, name] = String(scope).split(/:(.*)/s);
  return kind === "team" ? {team: name} : {agent: name};
}

/** Whether the caller may decide `item`, as the API rules it (cortex/service/auth.py): an admin anything; the
 * queue lists an agent's token only what it may decide, except what was held in its own agent's memory, which a
 * lead of one of its teams decides (itself, when it is such a lead). */
function mayDecide(me, self, item) {
  if (me.admin) return true;
  if (item.kind === "held" && item.scope === `agent:${me.agent}`) return Boolean(self.lead && (self.teams || []).length);
  return true;
}

function text(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function memoryRef(scope, id) {
  const [kind, name] = String(scope).split(/:(.*)/s);
  return kind === "agent" ? h("a", {href: memoryPath(name, id)}, id) : h("code", {}, id);
}

let counter = 0;

function contradiction(item, ids) {
  return [
    h("h3", {id: ids.heading}, "Contradiction"),
    h("div", {class: "review-pair", id: ids.body},
      h("section", {"aria-labelledby": `${ids.heading}-keep`},
        h("h4", {id: `${ids.heading}-keep`}, "Would keep"),
        h("blockquote", {class: "content"}, item.keep_content),
        h("p", {class: "muted"}, "Memory ", memoryRef(item.scope, item.keep))),
      h("section", {"aria-labelledby": `${ids.heading}-old`},
        h("h4", {id: `${ids.heading}-old`}, "Would supersede"),
        h("blockquote", {class: "content"}, item.supersede_content),
        h("p", {class: "muted"}, "Memory ", memoryRef(item.scope, item.supersede)))),
    facts([["Reason", item.reason], ["Scope", item.scope], ["Run", item.run || "—"]]),
  ];
}

function held(item, ids) {
  const entry = item.entry || {};
  const origin = Object.entries(item.origin || {}).filter(([, v]) => v !== null && v !== undefined && v !== "");
  return [
    h("h3", {id: ids.heading}, "Held for review"),
    h("div", {id: ids.body},
      h("h4", {}, "Would write"),
      h("blockquote", {class: "content"}, item.keep_content)),
    facts([
      ["Scope", item.scope],
      ["Why held", item.reason],
      ["From", item.agent || "—"],
      entry.type ? ["Type", entry.type] : null,
      (entry.tags || []).length ? ["Tags", entry.tags.join(", ")] : null,
      ["Origin", origin.length ? facts(origin.map(([k, v]) => [k, h("code", {class: "path"}, text(v))]),
        {class: "facts origin"}) : "—"],
      ["Run", item.run || "—"],
      ["Memory id", item.keep],
    ]),
  ];
}

/** What a decision did, in a sentence. */
function said(item, accept, report) {
  const run = report && report.run ? ` Run ${report.run}.` : "";
  const where = scopeName(item.scope);
  if (item.kind === "held") {
    return accept ? `Approved: memory ${item.keep} written to ${where}.${run}`
      : `Rejected: nothing written to ${where}.${run}`;
  }
  return accept ? `Approved: memory ${item.supersede} superseded by ${item.keep} in ${where}.${run}`
    : `Rejected: both memories kept in ${where}; the contradiction is off the list.${run}`;
}

async function render(ctx) {
  const items = await ctx.api("GET", "/review/all");
  const self = ctx.me.admin ? {} : (await ctx.agents()).find((a) => a.name === ctx.me.agent) || {};
  // data-keep: the last decision's message stays when its own live update re-renders the screen (app.js)
  const status = h("p", {id: "review-status", role: "status", tabindex: "-1", class: "review-status",
    dataset: {keep: ""}});
  const list = h("div", {class: "review-list"});
  const empty = () => h("p", {class: "empty"}, "Nothing waiting for review");

  const who = ctx.me.admin ? "every agent's own memory, every team's and the swarm's"
    : self.lead ? `${ctx.me.agent}'s memory, the memory of the teams it leads and the swarm's, and what was held in `
      + "its members' memory"
    : `${ctx.me.agent}'s memory`;
  const intro = h("p", {class: "muted"}, `The review queue of ${who}: contradictions consolidation found and left `
    + "for review, and memories an automatic channel would have written where they reach other agents, held for "
    + "a person or a lead to look at. Approve applies one, Reject leaves things as they are.");

  const scopes = [...new Set(items.map((i) => i.scope))];
  if (!items.length) replace(list, empty());
  for (const scope of scopes) {
    const mine = items.filter((i) => i.scope === scope);
    const headingId = `review-scope-${++counter}`;
    const section = h("section", {class: "review-scope", "aria-labelledby": headingId},
      h("h2", {id: headingId}, scopeName(scope)));
    for (const item of mine) section.append(card(ctx, item, self, status, list, empty));
    list.append(section);
  }
  return h("section", {class: "review"}, h("h1", {}, "Review"), intro, status, list);
}

function card(ctx, item, self, status, list, empty) {
  const n = ++counter;
  const ids = {heading: `review-item-${n}`, body: `review-body-${n}`};
  const article = h("article", {class: `review-item ${item.kind}`, "aria-labelledby": ids.heading,
    dataset: {keep: item.keep, kind: item.kind}});
  article.append(...(item.kind === "held" ? held(item, ids) : contradiction(item, ids)));
  const errors = h("div", {});
  if (!mayDecide(ctx.me, self, item)) {
    article.append(h("p", {class: "muted"}, "You may not approve or reject this: a lead of one of ",
      `${ctx.me.agent}'s teams or an admin decides what was held in its memory.`));
    return article;
  }
  // ids that stay the same when a live update re-renders the screen, so that the focus stays on the same button
  const key = [item.keep, item.supersede].filter(Boolean).join("-").replace(/[^A-Za-z0-9_-]/g, "_");
  const described = `${ids.heading} ${ids.body}`;
  const approve = h("button", {type: "button", class: "primary", id: `approve-${key}`, "aria-describedby": described},
    "Approve");
  const reject = h("button", {type: "button", id: `reject-${key}`, "aria-describedby": described}, "Reject");
  const decide = async (accept) => {
    approve.disabled = reject.disabled = true;
    replace(errors);
    const body = {keep: item.keep, accept, ...scopeArgs(item.scope)};
    if (item.kind !== "held") body.supersede = item.supersede;
    try {
      const report = await ctx.api("POST", "/review", body);
      const message = said(item, accept, report);
      const section = article.closest("section.review-scope");
      article.remove();
      if (section && !section.querySelector("article")) section.remove();
      if (!list.querySelector("article")) replace(list, empty());
      replace(status, message);
      status.focus();
    } catch (error) {
      approve.disabled = reject.disabled = false;
      replace(errors, problem(error));
    }
  };
  approve.addEventListener("click", () => decide(true));
  reject.addEventListener("click", () => decide(false));
  article.append(h("div", {class: "actions"}, approve, reject), errors);
  return article;
}
