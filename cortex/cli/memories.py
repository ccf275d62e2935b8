"""The commands of one memory's life (:mod:`cortex.app` domain ``memories``): store, store-many, get, update,
history, provenance, supersede, validate, inject, touch, forget, prune."""

from __future__ import annotations

from typing import Any

import click

from cortex import config, jsonsafe
from cortex.cli.options import PROJECT_HELP, TYPE_HELP, command, json_or_table
from cortex.cli.output import _as_json, _emit, _memory_json, _metadata, _read_content, _short, _table
from cortex.cli.state import _State, pass_state
from cortex.errors import InvalidInputError, MemoryNotFoundError


@command("store")
@click.argument("agent")
@click.argument("content")
@click.option("--type", "type_", default=config.DEFAULT_TYPE, show_default=True, help=TYPE_HELP)
@click.option("--project", default=config.DEFAULT_PROJECT, show_default=True, help=PROJECT_HELP)
@click.option("--confidence", type=float, default=config.DEFAULT_CONFIDENCE, show_default=True)
@click.option("--tag", "tags", multiple=True, help="A tag (lowercase slug; repeatable).")
@click.option("--metadata", default=None, help="A JSON object kept with the memory (at most 8 KiB).")
@click.option("--source", default="manual", show_default=True,
              help="Where it comes from: manual, agent_end, task_completion (expires in 7d), session_summary "
                   "(3d), file_index (30d), import, injected.")
@click.option("--ttl", default=None, help="Time to live (12h, 7d, ...) or 'never' (default: the source's).")
@click.option("--scope", default="agent", show_default=True,
              help="agent (its own), team:NAME (a team it is in) or swarm (leads only).")
@click.option("-q", "--quiet", is_flag=True, help="Print only the new memory's id (for ID=$(cortex store ...)).")
@pass_state
def store(state: _State, agent: str, content: str, type_: str, project: str, confidence: float,
          tags: tuple[str, ...], metadata: str | None, source: str, ttl: str | None, scope: str,
          quiet: bool) -> None:
    """Store a memory (CONTENT '-' reads it from stdin)."""
    with _as_json(state.cortex()) as cx:
        memory = cx.store(agent, _read_content(content), type=type_, project=project, confidence=confidence,
                          tags=tags, metadata=_metadata(metadata), source=source, ttl=ttl, scope=scope)
    stored = _memory_json(memory)
    if quiet:
        click.echo(stored["id"])
    else:
        _emit(stored)


@command("store_many")
@click.argument("agent")
@click.argument("entries", type=click.File("r", encoding="utf-8"), default="-")
@pass_state
def store_many(state: _State, agent: str, entries: Any) -> None:
    """Store many memories, in atomic writes of 1,000: ENTRIES is a JSON list, or JSON lines, of objects with
    "content" and any field of `cortex store` ("type", "confidence", "tags", "scope"...); '-' (default) reads
    stdin. All are checked first: one bad entry stores nothing and is named."""
    text = entries.read()
    try:
        data = jsonsafe.loads(text) if text.lstrip().startswith("[") else [
            jsonsafe.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise InvalidInputError("entries", f"is neither a JSON list nor JSON lines: {exc}") from None
    with _as_json(state.cortex()) as cx:
        stored = cx.store_many(agent, data)
    _emit([_memory_json(m) for m in stored])


@command("get")
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def get(state: _State, agent: str, memory_id: str) -> None:
    """Show one memory."""
    with _as_json(state.cortex(read_only=True)) as cx:
        memory = cx.get(agent, memory_id)
    if memory is None:
        raise MemoryNotFoundError(agent, memory_id)
    _emit(_memory_json(memory))


@command("update")
@click.argument("agent")
@click.argument("memory_id")
@click.option("--content", default=None, help="The corrected content ('-': read it from stdin).")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help=PROJECT_HELP)
@click.option("--confidence", type=float, default=None)
@click.option("--tag", "tags", multiple=True, help="The new tags (repeatable; replace the old ones).")
@click.option("--clear-tags", is_flag=True, help="Remove every tag.")
@click.option("--metadata", default=None, help="The new metadata, a JSON object ('{}' clears it).")
@click.option("--expected-version", type=int, default=None,
              help="Only if the memory is still at this version (else an error, nothing changed).")
@pass_state
def update(state: _State, agent: str, memory_id: str, content: str | None, type_: str | None, project: str | None,
           confidence: float | None, tags: tuple[str, ...], clear_tags: bool, metadata: str | None,
           expected_version: int | None) -> None:
    """Correct a memory in place: version + 1, the earlier version kept (see `cortex history`)."""
    if clear_tags and tags:
        raise click.UsageError("give --tag or --clear-tags, not both")
    new_tags = [] if clear_tags else (list(tags) or None)
    _emit(_memory_json(state.cortex().update(
        agent, memory_id, content=_read_content(content) if content is not None else None, type=type_,
        project=project, confidence=confidence, tags=new_tags, metadata=_metadata(metadata),
        expected_version=expected_version)))


@command("history")
@click.argument("agent")
@click.argument("memory_id")
@json_or_table
@pass_state
def history(state: _State, agent: str, memory_id: str, fmt: str) -> None:
    """Every version of a memory, oldest first (the last one is current)."""
    versions = state.cortex(read_only=True).history(agent, memory_id)
    if fmt == "json":
        _emit([_memory_json(m) for m in versions])
    else:
        rows = [(str(m.version), (m.updated_at or m.created_at).strftime("%Y-%m-%d %H:%M"), m.type.value,
                 f"{m.confidence:.2f}", _short(m.content)) for m in versions]
        click.echo(_table(rows, ["v", "updated", "type", "conf", "content"]))


@command("provenance")
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def provenance(state: _State, agent: str, memory_id: str) -> None:
    """Where a memory comes from (PROV-O): who wrote it, the activity that generated it (surface, hook event,
    session, tool), the memories it was derived from, its earlier versions."""
    _emit(state.cortex(read_only=True).provenance(agent, memory_id).model_dump(mode="json"))


@command("supersede")
@click.argument("agent")
@click.argument("memory_id")
@click.argument("content", required=False)
@click.option("--by", default=None, help="Instead of CONTENT: the id of an existing memory that replaces it.")
@click.option("--reason", default=None, help="Why the old memory no longer holds.")
@click.option("--type", "type_", default=None, help="Type of the new memory (default: the old one's).")
@click.option("--tag", "tags", multiple=True, help="Tags of the new memory (default: the old one's).")
@click.option("--source", default=None, help="Source of the new memory (default: manual).")
@click.option("--ttl", default=None, help="Time to live of the new memory.")
@pass_state
def supersede(state: _State, agent: str, memory_id: str, content: str | None, by: str | None, reason: str | None,
              type_: str | None, tags: tuple[str, ...], source: str | None, ttl: str | None) -> None:
    """Replace memory MEMORY_ID by CONTENT ('-': stdin) or by --by ID; the old one is kept, no longer current.
    Prints the replacing memory."""
    fields = {k: v for k, v in (("type", type_), ("tags", list(tags) or None), ("source", source), ("ttl", ttl))
              if v is not None}
    _emit(_memory_json(state.cortex().supersede(agent, memory_id, _read_content(content) if content is not None
                                                else None, by=by, reason=reason, **fields)))


@command("validate")
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def validate(state: _State, agent: str, memory_id: str) -> None:
    """Confirm a memory is still right: its decay clock restarts, confidence + 0.05."""
    _emit(_memory_json(state.cortex().validate(agent, memory_id)))


@command("inject_learning")
@click.argument("lead")
@click.argument("content")
@click.option("--category", required=True,
              type=click.Choice(["mistake-pattern", "best-practice", "codebase-knowledge", "preference"]))
@click.option("--team", default=None, help="Into this team's memory (one LEAD leads; default: the swarm).")
@click.option("--to", "to", default=None, help="Into this worker's own memory.")
@click.option("--confidence", type=float, default=0.9, show_default=True)
@click.option("--project", default=config.DEFAULT_PROJECT, show_default=True, help=PROJECT_HELP)
@pass_state
def inject(state: _State, lead: str, content: str, category: str, team: str | None, to: str | None,
           confidence: float, project: str) -> None:
    """A lead shares a learning (CONTENT '-': stdin) with the swarm, one team or one worker."""
    _emit(_memory_json(state.cortex().inject_learning(lead, _read_content(content), category, team=team, to=to,
                                                      confidence=confidence, project=project)))


@command("touch")
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def touch(state: _State, agent: str, memory_id: str) -> None:
    """Record a use of a memory (usageCount + 1, lastUsedAt = now)."""
    _emit(_memory_json(state.cortex().touch(agent, memory_id)))


@command("forget")
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def forget(state: _State, agent: str, memory_id: str) -> None:
    """Delete a memory."""
    if not state.cortex().forget(agent, memory_id):
        raise MemoryNotFoundError(agent, memory_id)
    _emit({"id": memory_id, "forgotten": True})


@command("prune")
@click.argument("agent", required=False)
@click.option("--min-confidence", type=float, default=config.DEFAULT_MIN_CONFIDENCE, show_default=True,
              help="Delete memories with confidence strictly below this.")
@click.option("--max-age", default=None, help="Also delete memories unused for longer than this (30d, 12h, 90m).")
@click.option("--dry-run", is_flag=True, help="Only report what would be deleted.")
@click.option("--expired", is_flag=True,
              help="Instead: delete the memories whose time to live has run out (AGENT's own; without AGENT, "
                   "every agent's and every shared scope's).")
@pass_state
def prune(state: _State, agent: str | None, min_confidence: float, max_age: str | None, dry_run: bool,
          expired: bool) -> None:
    """Delete low-confidence or long-unused memories (or, with --expired, expired ones)."""
    if expired:
        if dry_run:
            raise click.UsageError("--expired deletes at once; list them with `cortex list AGENT "
                                   "--include-expired` first")
        _emit({"count": state.cortex().purge_expired(agent), "expired": True})
        return
    if agent is None:
        raise click.UsageError("missing AGENT (only --expired works on every agent)")
    ids = state.cortex().prune_candidates(agent, min_confidence, max_age, delete=not dry_run)
    _emit({"count": len(ids), "ids": ids, "dry_run": dry_run})  # the same answer as the HTTP route


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (store, store_many, get, update, history, provenance, supersede, validate, inject, touch, forget, prune)
