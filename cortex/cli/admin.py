"""The commands about agents, indexes and the store (domain ``admin``): agents list, reindex, index-status,
info."""

from __future__ import annotations

from typing import Any

import click

from cortex.cli.options import command, group, json_or_table, name_of
from cortex.cli.output import _embedding_progress, _emit, _note_without_embeddings, _table
from cortex.cli.state import _State, pass_state


@group("describe_agents")
def agents() -> None:
    """Declared agents."""


@agents.command(name_of("describe_agents"))
@json_or_table
@pass_state
def agents_list(state: _State, fmt: str) -> None:
    """List the agents declared in the agent directories."""
    registry = state.registry()
    items: list[dict[str, Any]] = [
        {"name": d.name, "description": d.description, "memory": d.memory, "memory_enabled": d.memory_enabled,
         "project": d.settings.project, "path": str(d.path) if d.path else None, "problems": []}
        for d in registry.list()
    ]
    # a broken file is listed too, with what is wrong (it declares no agent until fixed)
    items += [{"name": problems[0].agent, "description": None, "memory": None, "memory_enabled": False,
               "project": None, "path": str(path), "problems": [f"{p.field}: {p.message}" for p in problems]}
              for path, problems in registry.broken.items()]
    if fmt == "json":
        _emit(items)
    else:
        rows = [(str(i["name"] or "?"), "BROKEN" if i["problems"] else "yes" if i["memory_enabled"] else "no",
                 str(i["path"] or ""), "; ".join(i["problems"]) or str(i["description"])) for i in items]
        click.echo(_table(rows, ["name", "memory", "path", "description"]))


@command("reindex")
@click.argument("agent_names", metavar="[AGENT]...", nargs=-1)
@click.option("--force", is_flag=True, help="Re-embed every memory, not only those without a current vector.")
@pass_state
def reindex(state: _State, agent_names: tuple[str, ...], force: bool) -> None:
    """Rebuild indexes from the store and embed what lacks a vector of the current model (default: every
    agent and shared scope with memories in the store; team:NAME and swarm name a shared one)."""
    cx = state.cortex()
    names = list(agent_names) or cx.stored_scopes()
    _note_without_embeddings(cx.info())
    report = {}
    for name in names:
        with _embedding_progress(name) as progress:
            report[name] = cx.reindex(name, force=force, progress=progress)
    _emit(report)


@command("index_status")
@click.argument("agent")
@pass_state
def index_status(state: _State, agent: str) -> None:
    """What AGENT's derived index holds against the store: memories, vectors and their model, pending changes."""
    import dataclasses

    _emit(dataclasses.asdict(state.cortex(read_only=True).index_status(agent)))


@command("info")
@pass_state
def info(state: _State) -> None:
    """Where the memory is kept (no credentials) and which embedding model it uses."""
    _emit(state.cortex(read_only=True).info())


@group("scan_secrets")
def secrets() -> None:
    """Secrets in the store."""


@secrets.command(name_of("scan_secrets"))
@click.option("--agent", default=None, help="Only this agent's own scope (team:NAME, swarm: a shared one).")
@click.option("--redact", is_flag=True, help="Replace what is found by placeholders (default: only report it).")
@json_or_table
@pass_state
def secrets_scan(state: _State, agent: str | None, redact: bool, fmt: str) -> None:
    """Scan the store (every scope, or --agent's) for secrets in every version of every memory and the scopes'
    other records (activities, consolidation runs, entity names); --redact replaces them by placeholders in one
    atomic write per scope, recorded in provenance, and rebuilds the indexes. The secrets are never printed."""
    report = state.cortex().scan_secrets(agent, redact=redact)
    data = report if isinstance(report, dict) else report.model_dump(mode="json")
    if fmt == "json":
        _emit(data)
        return
    rows = [(f["scope"], f["where"], f["memory_id"] or "", str(f["version"] or ""),
             ", ".join(f"{n} {rule}" for rule, n in sorted(f["rules"].items()))) for f in data["findings"]]
    click.echo(_table(rows, ["scope", "where", "memory", "version", "secrets"]) if rows else "no secrets found")
    total = sum(data["total"].values())
    done = "redacted" if data["redacted"] else "found (dry run: nothing changed; --redact replaces them)"
    click.echo(f"{total} secret{'' if total == 1 else 's'} {done}", err=True)


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (agents, reindex, index_status, info, secrets)
