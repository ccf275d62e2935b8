// The Team screen: for each team the caller belongs to (an admin: every team), the team's memory (paged) and what
// each member learned this round (since the team's last round end), and "End round" for a lead or an admin.
import {query} from "../api.js";
import {badge, h, memoryPath, problem, replace, when} from "../dom.js";
import {reportView} from "./runs.js";

const PAGE = 20;

function memoryItem(memory, reader) {
  const text = h("span", {class: "content"}, memory.content);
  return h("li", {class: "hit"},
    reader ? h("a", {href: memoryPath(reader, memory.id)}, text) : text,
    h("div", {class: "muted"}, badge(memory.type), badge(memory.source), " ", when(memory.created_at)));
}

/** The team's memory, a page at a time ("More" continues), read through `reader`. */
function teamMemory(ctx, team, reader) {
  const list = h("ul", {class: "plain"});
  const more = h("div", {});
  const box = h("div", {}, list, more);
  async function page(cursor) {
    const found = await ctx.api("GET", `/agents/${encodeURIComponent(reader)}/list${query(
      {scope: `team:${team}`, limit: PAGE, cursor})}`);
    if (!cursor && !found.items.length) replace(list, h("li", {}, "The team memory is empty."));
    found.items.forEach((m) => list.append(memoryItem(m, reader)));
    if (found.next_cursor) {
      const button = h("button", {type: "button"}, "More");
      button.addEventListener("click", async () => {
        button.disabled = true;
        const first = list.children.length;
        try {
          await page(found.next_cursor);
          const next = list.children[first] && list.children[first].querySelector("a");
          if (next) next.focus();
        } catch (error) { replace(more, problem(error)); }
      });
      replace(more, button);
    } else {
      replace(more);
    }
  }
  return {box, load: () => { replace(list); return page(null); }};
}

/** What each member stored since the team's last round end (GET /v1/teams/{team}/round). */
function roundView(ctx, team) {
  const box = h("div", {});
  async function load() {
    const round = await ctx.api("GET", `/teams/${encodeURIComponent(team)}/round`);
    const last = round.last_round_end;
    const since = h("time", {datetime: round.since, title: round.since}, round.since.replace("T", " ").slice(0, 19));
    // a member's own memory opens through its agent: for an admin, or for the member itself
    const readerOf = (member) => (ctx.me.admin || ctx.me.agent === member.agent ? member.agent : null);
    replace(box,
      h("p", {}, "Since ", since, last ? [" (the round end of run ", h("code", {}, last.run), ")"]
        : " (no round end yet: the oldest a round reads)"),
      round.members.map((member) => [
        h("h4", {}, `${member.agent}`, member.lead ? [" ", badge("lead")] : null),
        member.memories.length
          ? h("ul", {class: "plain", "aria-label": `Learned by ${member.agent} this round`},
            member.memories.map((m) => memoryItem(m, readerOf(member))))
          : h("p", {class: "muted"}, "Nothing stored this round."),
      ]));
  }
  return {box, load};
}

function teamSection(ctx, team, agents) {
  const members = agents.filter((a) => (a.teams || []).includes(team));
  const leads = members.filter((a) => a.lead).map((a) => a.name);
  const reader = ctx.me.admin ? (leads[0] || members[0].name) : ctx.me.agent;
  const mine = agents.find((a) => a.name === ctx.me.agent);
  const mayEnd = ctx.me.admin || Boolean(mine && mine.lead && (mine.teams || []).includes(team));
  const memory = teamMemory(ctx, team, reader);
  const round = roundView(ctx, team);
  const id = `team-${team}`;
  // data-keep: the round end's report stays when its own live update re-renders the screen (app.js)
  const result = h("div", {id: `${id}-result`, role: "status", "aria-live": "polite", dataset: {keep: ""}});
  let end = null;
  if (mayEnd) {
    end = h("button", {type: "button", class: "primary"}, "End round");
    end.addEventListener("click", async () => {
      end.disabled = true;
      replace(result, h("p", {}, `Ending the round of team ${team}…`));
      try {
        const report = await ctx.api("POST", `/teams/${encodeURIComponent(team)}/round-end`, {});
        replace(result, reportView(report, `Round end of team ${team}`, ctx.me));
        await Promise.all([memory.load(), round.load()]);
      } catch (error) {
        replace(result, problem(error));
      } finally {
        end.disabled = false;
      }
    });
  }
  const section = h("section", {"aria-labelledby": id},
    h("h2", {id}, `Team ${team}`),
    h("p", {}, leads.length ? `Led by ${leads.join(", ")}` : "No lead", ctx.me.admin ? "" : ` · you are ${
      mine && mine.lead ? "its lead" : "a member"}`),
    end ? h("div", {class: "actions"}, end) : null,
    result,
    h("h3", {}, "Team memory"),
    memory.box,
    h("h3", {}, "Learned this round"),
    round.box);
  return {section, load: () => Promise.all([memory.load(), round.load()])};
}

async function render(ctx) {
  const agents = (await ctx.agents()).filter((a) => a.memory_enabled && !(a.problems || []).length);
  const mine = agents.find((a) => a.name === ctx.me.agent);
  const teams = ctx.me.admin ? [...new Set(agents.flatMap((a) => a.teams || []))].sort()
    : [...(mine ? mine.teams || [] : [])].sort();
  const root = h("section", {}, h("h1", {}, "Team"));
  if (!teams.length) {
    root.append(h("p", {}, ctx.me.admin ? "No agent declares a team (cortex: teams)." : "You are in no team."));
    return root;
  }
  // an agent token sees its own agent only: the other members come with the team's round
  const known = ctx.me.admin ? agents : await membersOf(ctx, teams, agents);
  const sections = teams.map((team) => teamSection(ctx, team, known));
  await Promise.all(sections.map((s) => s.load()));
  sections.forEach((s) => root.append(s.section));
  return root;
}

/** The agents of the caller's teams as far as it may know them: itself, and the members its teams' rounds name. */
async function membersOf(ctx, teams, agents) {
  const known = new Map(agents.map((a) => [a.name, {...a, teams: [...(a.teams || [])]}]));
  for (const team of teams) {
    const round = await ctx.api("GET", `/teams/${encodeURIComponent(team)}/round`);
    for (const member of round.members) {
      const entry = known.get(member.agent) || {name: member.agent, teams: [], lead: member.lead};
      if (!entry.teams.includes(team)) entry.teams.push(team);
      known.set(member.agent, entry);
    }
    for (const lead of round.leads) {
      const entry = known.get(lead) || {name: lead, teams: [], lead: true};
      if (!entry.teams.includes(team)) entry.teams.push(team);
      known.set(lead, entry);
    }
  }
  return [...known.values()];
}

export const routes = [
  {path: /^\/team$/, title: "Team", render},
];
