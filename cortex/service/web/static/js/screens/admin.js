// The Admin screen (an admin token only): export (backup) a scope as RDF, import (restore) an RDF file, and the
// server's state: its store and model, the capture queue, the consolidation sweep.
import {api, query} from "../api.js";
import {facts, h, problem, replace} from "../dom.js";

const FORMATS = {trig: "trig", nq: "nquads", nquads: "nquads", ttl: "turtle", turtle: "turtle", jsonld: "jsonld",
  json: "jsonld"};
let download = null;  // the Blob URL of the last export (revoked when another replaces it)

function value(v) {
  if (v === null || v === undefined || v === "") return "—";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

function state(title, id, data) {
  return h("section", {"aria-labelledby": id}, h("h2", {id}, title),
    facts(Object.entries(data).map(([k, v]) => [k.replaceAll("_", " "), value(v)])));
}

async function exportSection(ctx) {
  const agents = (await ctx.agents()).filter((a) => a.memory_enabled && !(a.problems || []).length);
  const teams = [...new Set(agents.flatMap((a) => a.teams || []))].sort();
  const choices = [["all", "Every scope"], ...agents.map((a) => [`agent:${a.name}`, `agent ${a.name}`]),
    ...teams.map((t) => [`team:${t}`, `team ${t}`])];
  const select = h("select", {id: "export-scope", name: "scope"},
    choices.map(([v, text]) => h("option", {value: v}, text)));
  const button = h("button", {type: "submit"}, "Export");
  const result = h("div", {role: "status", "aria-live": "polite"});
  const form = h("form", {class: "toolbar"}, h("div", {}, h("label", {for: "export-scope"}, "Scope"), select), button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const scope = select.value;
      const params = scope === "all" ? {all: true} : scope.startsWith("team:") ? {team: scope.slice(5)}
        : {agent: scope.slice(6)};
      const answer = await api("GET", `/export${query({...params, format: "trig"})}`, undefined, {raw: true});
      const blob = await answer.blob();
      if (download) URL.revokeObjectURL(download);
      download = URL.createObjectURL(blob);
      const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "").replace("T", "-");
      const name = `cortex-${scope === "all" ? "all" : scope.replace(":", "-")}-${stamp}.trig`;
      replace(result,
        h("p", {}, `Exported ${answer.headers.get("Cortex-Quads") || "the"} quads of `,
          scope === "all" ? "every scope" : scope.replace(":", " "), ": ",
          h("a", {href: download, download: name}, `Download ${name}`),
          ` (${blob.size} bytes).`));
    } catch (error) {
      replace(result, problem(error));
    } finally {
      button.disabled = false;
    }
  });
  return h("section", {"aria-labelledby": "export-title"},
    h("h2", {id: "export-title"}, "Export (backup)"),
    h("p", {}, "The memories of a scope as RDF (TriG), exactly as stored: importing the file restores them."),
    form, result);
}

function importSection() {
  const input = h("input", {id: "import-file", name: "file", type: "file",
    accept: ".trig,.nq,.nquads,.ttl,.jsonld,.json", required: true});
  const button = h("button", {type: "submit"}, "Import");
  const result = h("div", {role: "status", "aria-live": "polite"});
  const form = h("form", {class: "toolbar"}, h("div", {}, h("label", {for: "import-file"}, "RDF file"), input), button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = input.files && input.files[0];
    if (!file) {
      replace(result, problem({message: "Choose an RDF file to import."}));
      input.focus();
      return;
    }
    const format = FORMATS[(file.name.split(".").pop() || "").toLowerCase()] || "trig";
    button.disabled = true;
    replace(result, h("p", {}, `Importing ${file.name}…`));
    try {
      const answer = await api("POST", `/import${query({format})}`, file);
      const counts = Object.entries(answer.imported || {});
      replace(result, h("div", {},
        h("p", {class: "ok"}, `Imported ${file.name}:`),
        counts.length
          ? h("ul", {}, counts.map(([scope, n]) => h("li", {}, `${scope}: ${n} memor${n === 1 ? "y" : "ies"}`)))
          : h("p", {}, "no memory in it.")));
    } catch (error) {
      replace(result, h("div", {}, problem(error),
        h("p", {}, "Nothing was imported: the store is as it was.")));
    } finally {
      button.disabled = false;
    }
  });
  return h("section", {"aria-labelledby": "import-title"},
    h("h2", {id: "import-title"}, "Import (restore)"),
    h("p", {}, "An export (TriG, N-Quads, JSON-LD) is checked whole first, then written at once, or nothing is."),
    form, result);
}

async function render(ctx) {
  if (!ctx.me.admin) {
    return h("section", {}, h("h1", {}, "Admin"),
      problem({message: `The admin screen needs an admin token: you are signed in as agent ${ctx.me.agent}, ` +
        "which may not export or import the store."}));
  }
  const [info, queue, sweep] = await Promise.all([api("GET", "/info"), api("GET", "/capture/queue"),
    api("GET", "/consolidate/sweep")]);
  return h("section", {},
    h("h1", {}, "Admin"),
    await exportSection(ctx),
    importSection(),
    state("Server", "server-title", info),
    state("Capture queue", "queue-title", queue),
    state("Consolidation sweep", "sweep-title", sweep));
}

export const routes = [
  {path: /^\/admin$/, title: "Admin", render},
];
