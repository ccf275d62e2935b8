// The Agents screen: each declared agent with memory, its counts, last activity and decay; broken files.
import {h, table} from "../dom.js";

async function list(ctx) {
  const agents = await ctx.agents(true);
  const sound = agents.filter((a) => a.problems.length === 0 && a.memory_enabled);
  const broken = agents.filter((a) => a.problems.length > 0);
  return h("section", {},
    h("h1", {}, "Agents"),
    table("Agents with memory", ["Agent", "Memories", "Project", "Teams"],
      sound.map((a) => [h("a", {href: `/agents/${encodeURIComponent(a.name)}`}, a.name), String(a.memories),
        a.project || "", a.teams.join(", ")])),
    broken.length ? [h("h2", {}, "Broken agent files"),
      h("ul", {}, broken.map((a) => h("li", {}, h("strong", {}, a.name), ": ", a.problems.join("; "))))] : null);
}

export const routes = [
  {path: /^\/agents$/, title: "Agents", render: list},
];
