"""The commands that read memories (domain ``reading``): recall, search, list, stats, start."""

from __future__ import annotations

import contextlib

from typing import TYPE_CHECKING, Any

import click

from cortex import config
from cortex.cli.options import FORMATS, TYPE_HELP, _filters, command, json_or_table, read_filters
from cortex.cli.output import _as_json, _emit, _memory_json, _memory_table, _note, _on_terminal, _search_json, _show_memories
from cortex.cli.state import _State, pass_state

if TYPE_CHECKING:
    from cortex.model import Memory


@command("recall")
@click.argument("agent")
@click.argument("query", required=False)
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=config.DEFAULT_LIMIT, show_default=True)
@click.option("--as-of", default=None, help="What was recorded and valid at this moment (ISO 8601).")
@read_filters
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@pass_state
def recall(state: _State, agent: str, query: str | None, type_: str | None, project: str | None,
           limit: int, as_of: str | None, tags: tuple[str, ...], scope: str | None, source: str | None,
           include_expired: bool, include_superseded: bool, fmt: str) -> None:
    """Memories containing every word of QUERY (all memories without one), from the agent's own memory, its
    teams' and the swarm's; current ones unless widened."""
    fmt = _on_terminal(fmt)
    with _as_json(state.cortex(read_only=True), fmt == "json") as cx:
        found = cx.recall(agent, query, type=type_, project=project, limit=limit, as_of=as_of,
                          **_filters(tags, scope, source, include_expired, include_superseded))
    _show_memories(found, fmt)


@command("search")
@click.argument("agent")
@click.argument("query")
@click.option("--mode", default=config.DEFAULT_SEARCH_MODE, show_default=True, help="all, bm25, semantic or hybrid.")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=config.DEFAULT_LIMIT, show_default=True)
@click.option("--explain", is_flag=True, help="Include each hit's score components.")
@click.option("--as-of", default=None, help="What was recorded and valid at this moment (ISO 8601).")
@click.option("--unused", is_flag=True, help="Weigh down memories shown at starts over 3 times that no output "
                                             "used (the block's rule; off by default: a touch counts as shown).")
@read_filters
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@pass_state
def search(state: _State, agent: str, query: str, mode: str, type_: str | None, project: str | None, limit: int,
           explain: bool, as_of: str | None, unused: bool, tags: tuple[str, ...], scope: str | None,
           source: str | None, include_expired: bool, include_superseded: bool, fmt: str) -> None:
    """Ranked search: all (AND-token), bm25, semantic or hybrid (semantic modes fall back to bm25, with a
    note on stderr, when they cannot run)."""
    fmt = _on_terminal(fmt)
    with _as_json(state.cortex(read_only=True), fmt == "json") as cx:
        rerank: Any = True
        if unused:  # the model (pydantic) loads only for a search that asks for it, not for every search
            from cortex.model import Reranking

            rerank = Reranking(unused=True)
        result = cx.search(agent, query, mode=mode, type=type_, project=project, limit=limit, explain=explain,
                           as_of=as_of, rerank=rerank, **_filters(tags, scope, source, include_expired,
                                                                  include_superseded))
    _note(result)
    if fmt == "json":
        _emit(_search_json(result, explain))
    else:
        _show_memories([h.memory for h in result], fmt)


@command("list_memories")
@click.argument("agent")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=50, show_default=True,
              help="Memories per page.")
@click.option("--cursor", default=None, help="Continue after the page that printed this next_cursor.")
@click.option("--all", "every", is_flag=True, help="Every page, one after the other.")
@click.option("--session", default=None, help="Only what this agent session's writes created (a capture of its "
                                              "transcript, its hooks).")
@click.option("--since", default=None, help="Only what was created since: an ISO 8601 time or a duration back "
                                            "from now (2h, 7d).")
@read_filters
@json_or_table
@pass_state
def list_(state: _State, agent: str, type_: str | None, project: str | None, limit: int, cursor: str | None,
          every: bool, session: str | None, since: str | None, tags: tuple[str, ...], scope: str | None,
          source: str | None, include_expired: bool, include_superseded: bool, fmt: str) -> None:
    """Everything AGENT can see (its own, its teams', the swarm's memories), newest first, a page at a time;
    --session and --since show what one capture or one stretch of time left."""
    fmt = _on_terminal(fmt)
    cx = state.cortex(read_only=True)
    items: list[Memory] = []
    while True:
        page = cx.list_memories(agent, type=type_, project=project, limit=limit, cursor=cursor, session=session,
                                since=since, **_filters(tags, scope, None if source is None else source,
                                                        include_expired, include_superseded))
        items.extend(page.items)
        cursor = page.next_cursor
        if not every or cursor is None:
            break
    if fmt == "json":
        _emit({"items": [_memory_json(m) for m in items], "next_cursor": cursor})
    else:
        click.echo(_memory_table(items, lifecycle=True))
        if cursor is not None:
            click.echo(f"cortex: more: cortex list {agent} --cursor {cursor}", err=True)


@command("stats")
@click.argument("agent")
@click.option("--usage", is_flag=True, help="Use instead: per source (by_source) and per memory (by_memory) how "
                                            "often memories were shown (injected or touched), how often an "
                                            "agent's output actually used them, and the ratio.")
@click.option("--order", type=click.Choice(config.USAGE_ORDERS), default="used", show_default=True,
              help="With --usage, the memories listed: used (those used, most first: what proved useful), ratio, "
                   "shown, or unused (shown and never used).")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="With --usage, how many memories are listed.")
@pass_state
def stats(state: _State, agent: str, usage: bool, order: str, limit: int) -> None:
    """Count an agent's memories by type (with --usage: per source and per memory, how often shown memories were
    used)."""
    cx = state.cortex(read_only=True)
    if not usage:
        _emit(cx.stats(agent))
        return
    _emit({"by_source": cx.usage_stats(agent),
           "by_memory": [m.model_dump(mode="json") for m in cx.memory_usage(agent, order=order, limit=limit)]})


@command("agent_overview")
@click.argument("agent")
@pass_state
def overview(state: _State, agent: str) -> None:
    """An agent at a glance (JSON): its current memories by type, source and scope, its last activity, how many
    are fresh, fading or stale by decay, expire within a week, the next prune deletes, were never shown or used."""
    _emit(state.cortex(read_only=True).agent_overview(agent))


@command("agent_start")
@click.argument("agent")
@click.option("--task", default=None, help="What the agent is about to do.")
@click.option("--project", default=None, help="Project of the task: its memories and the global ones (default: the agent's cortex.project, else all).")
@click.option("--limit", type=click.IntRange(1, 1000), default=None)
@click.option("--max-chars", type=click.IntRange(1), default=None)
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeat: all of them).")
@click.option("--scope", default=None, help="Only this scope: agent, team:NAME or swarm.")
@click.option("--no-touch", is_flag=True, help="Do not mark what it shows as used (a block shown again).")
@pass_state
def start(state: _State, agent: str, task: str | None, project: str | None, limit: int | None,
          max_chars: int | None, tags: tuple[str, ...], scope: str | None, no_touch: bool) -> None:
    """Print the <agent-memory> block for an agent starting on TASK (touches what it shows)."""
    block = state.cortex().agent_start(agent, task=task, project=project, limit=limit, max_chars=max_chars,
                                       tags=list(tags) or None, scope=scope, touch=not no_touch)
    if block:
        click.echo(block)


@command("agent_prompt")
@click.argument("agent")
@click.argument("prompt")
@click.option("--session", default=None,
              help="The agent session whose context it completes: what its start and earlier prompts showed, and "
                   "what it wrote, is left out (the hooks pass their payload's session id).")
@click.option("--limit", type=click.IntRange(1, 1000), default=None, help="At most this many memories (3).")
@click.option("--max-chars", type=click.IntRange(1), default=None, help="At most this many characters (1500).")
@click.option("--no-touch", is_flag=True, help="Do not mark what it shows as used.")
@pass_state
def prompt(state: _State, agent: str, prompt: str, session: str | None, limit: int | None, max_chars: int | None,
           no_touch: bool) -> None:
    """Print the <agent-memory> block of the memories PROMPT needs that the session's context lacks (nothing
    when there are none; touches what it shows)."""
    from cortex import provenance

    with provenance.activity(session=session) if session else contextlib.nullcontext():
        block = state.cortex().agent_prompt(agent, prompt, limit=limit, max_chars=max_chars, touch=not no_touch)
    if block:
        click.echo(block)


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (recall, search, list_, stats, overview, start, prompt)
