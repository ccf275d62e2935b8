"""The ``cortex`` command line: a thin adapter over a :class:`cortex.api.MemoryAPI` (the running server's
client, or the store opened here).

Data goes to stdout as JSON (or a block/table with ``--format``); diagnostics go to stderr. Exit codes: 0 on
success, 1 on errors (one line on stderr), 2 on usage errors. Only click and the light base modules are
imported up front: ``cortex --help`` must not pay for numpy, pydantic or the store.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from cortex import __version__, config
from cortex.errors import CortexError, InvalidInputError, MemoryNotFoundError

if TYPE_CHECKING:
    from cortex.agents import AgentRegistry
    from cortex.api import MemoryAPI
    from cortex.model import Memory

TYPE_HELP = "Memory type: " + ", ".join(config.MEMORY_TYPES) + "."
PROJECT_HELP = "Project the memory belongs to ('global': every project)."
FORMATS = click.Choice(["json", "block", "table"])


class _State:
    def __init__(self, store: str | None, agents_dirs: tuple[Path, ...], embeddings: str = "auto") -> None:
        from cortex.state import state_dir_of

        self.embeddings = embeddings
        self.root = config.find_project_root()
        self.store: Path | str = (store if "://" in store else Path(store)) if store is not None \
            else config.default_store_path(self.root)
        self.state_dir = state_dir_of(self.store)
        # every candidate, existing or not: a server started now must see a directory created later
        self.agent_dirs = list(agents_dirs) or config.agent_dir_candidates(self.root)
        self._cx: MemoryAPI | None = None

    def printable_store(self) -> str:
        """The store's location, fit to print (no credentials)."""
        from cortex.state import printable_location

        return printable_location(self.store)

    def need_state_dir(self) -> Path:
        """The store's state directory (tokens, the server's discovery file), for commands that need one."""
        if self.state_dir is None:
            from cortex.state import printable_location

            raise InvalidInputError("store", f"{printable_location(self.store)} has no local state directory for "
                                             "this command (give --state-dir or $CORTEX_STATE_DIR)")
        return self.state_dir

    def registry(self) -> AgentRegistry:
        """The agents of the discovered directories; each problem is a warning on stderr."""
        from cortex.agents import AgentRegistry

        registry = AgentRegistry()
        for problem in registry.load(self.agent_dirs):
            click.echo(f"cortex: warning: {problem}", err=True)
        return registry

    def cortex(self, *, read_only: bool = False) -> MemoryAPI:
        """The running server's client when one owns the store, else the store opened here (see
        :func:`cortex.service.connect.for_cli`)."""
        if self._cx is None:
            from cortex.client import RemoteCortex
            from cortex.service.connect import for_cli

            cx = for_cli(self.store, embeddings=self.embeddings, read_only=read_only)
            if not isinstance(cx, RemoteCortex):  # the store opened here: it needs the agents
                cx.agents = self.registry()  # type: ignore[attr-defined]
            self._cx = cx
        return self._cx

    def close(self) -> None:
        if self._cx is not None:
            self._cx.close()


class _Group(click.Group):
    """Turns every :class:`CortexError` into one line on stderr and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        from cortex import notices

        try:
            with notices.collect() as notes:
                try:
                    return super().invoke(ctx)
                finally:
                    for note in notes:  # a write the prune will delete, what a prune deleted
                        click.echo(f"cortex: warning: {note}", err=True)
        except CortexError as exc:
            click.echo(f"cortex: error: {exc}", err=True)
            ctx.exit(1)
        except UnicodeDecodeError as exc:
            click.echo(f"cortex: error: input is not valid UTF-8 ({exc.reason} at byte {exc.start})", err=True)
            ctx.exit(1)


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


#: What each stage of an export or import is called on its progress bar.
_STAGES = {"export": "exporting memories", "read": "reading quads", "check": "checking subjects",
           "write": "writing quads", "index": "indexing memories", "import": "importing items"}
PROGRESS_HELP = "Show a progress bar on stderr (default: when stderr is a terminal)."


@contextmanager
def _progress(wanted: bool | None) -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A rich progress bar on stderr (never stdout: an export may be writing its data there), one line per
    stage; None when not ``wanted`` (by default: when stderr is not a terminal)."""
    if not (wanted if wanted is not None else sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        tasks: dict[str, Any] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            task = tasks.get(stage)
            if task is None:
                task = tasks[stage] = bar.add_task(_STAGES.get(stage, stage), total=total)
            bar.update(task, completed=done, total=total)

        yield report


def _memory_json(memory: Memory | dict[str, Any]) -> dict[str, Any]:
    """A memory as the CLI prints it: ``model_dump(mode="json")``, which is what a server's client answers
    inside :func:`_as_json` (passed on as it is)."""
    return memory if isinstance(memory, dict) else memory.model_dump(mode="json")


@contextmanager
def _as_json(cx: MemoryAPI, wanted: bool = True) -> Iterator[MemoryAPI]:
    """``cx``, which inside this block answers the server's JSON instead of models when it is a server's client
    (see :meth:`cortex.client.RemoteCortex.as_json`): a command that only prints the answer never imports the
    models then. For JSON output only (``wanted``): the other formats need the models."""
    as_json = getattr(cx, "as_json", None) if wanted else None
    if as_json is None:
        yield cx
        return
    with as_json():
        yield cx


def _search_json(result: Any, explain: bool) -> dict[str, Any]:
    """A search result as the CLI prints it: ``model_dump(mode="json")`` (each hit's memory with every field, as
    ``get`` and ``recall`` print it), each hit's ``explain`` only when asked for."""
    data: dict[str, Any] = result if isinstance(result, dict) else result.model_dump(mode="json")
    if explain:
        return data
    return data | {"hits": [{k: v for k, v in hit.items() if k != "explain"} for hit in data["hits"]]}


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    cells = [list(headers)] + [[str(c).replace("\n", " ") for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def _show_memories(memories: list[Memory], fmt: str) -> None:
    if fmt == "json":
        _emit([_memory_json(m) for m in memories])
    elif fmt == "block":
        from cortex.render import render as render_block

        block = render_block(memories)
        if block:
            click.echo(block)
    else:
        click.echo(_memory_table(memories))


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _memory_table(memories: Sequence[Memory], *, lifecycle: bool = False) -> str:
    """Memories as a table for a terminal; ``lifecycle`` adds scope, source, version, tags and state."""
    rows: list[tuple[str, ...]]
    if not lifecycle:
        rows = [(m.id, m.type.value, m.project, f"{m.confidence:.2f}", str(m.usage_count), _short(m.content))
                for m in memories]
        return _table(rows, ["id", "type", "project", "conf", "uses", "content"])
    from cortex.model import utcnow

    now = utcnow()
    rows = [(m.id, m.created_at.strftime("%Y-%m-%d %H:%M"), m.scope, m.type.value, m.source.value, str(m.version),
             ",".join(m.tags), "superseded" if m.superseded else "expired" if m.expired(now) else "current",
             _short(m.content, 50)) for m in memories]
    return _table(rows, ["id", "created", "scope", "type", "source", "v", "tags", "state", "content"])


def _read_content(content: str) -> str:
    """CONTENT as given, or stdin for '-' (without the newline `echo` and editors add)."""
    if content == "-":
        return sys.stdin.read().removesuffix("\n").removesuffix("\r")
    return content


def _metadata(text: str | None) -> Any:
    """``--metadata`` JSON text as a value (Cortex says what is wrong with it)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInputError("metadata", f"is not JSON: {exc}") from None


def read_filters(function: Any) -> Any:
    """The options every read takes: tags, scope, source, and time."""
    for decorator in reversed([
        click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeat: all of them)."),
        click.option("--scope", default=None, help="Only this scope: agent, team:NAME or swarm (default: all the "
                                                   "agent reads)."),
        click.option("--source", default=None, help="Only memories from this source (manual, agent_end, ...)."),
        click.option("--include-expired", is_flag=True, help="Also memories whose time to live ran out."),
        click.option("--include-superseded", is_flag=True, help="Also memories replaced by newer ones."),
    ]):
        function = decorator(function)
    return function


def _filters(tags: tuple[str, ...], scope: str | None, source: str | None, include_expired: bool,
             include_superseded: bool) -> dict[str, Any]:
    return {"tags": list(tags) or None, "scope": scope, "source": source, "include_expired": include_expired,
            "include_superseded": include_superseded}


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", "store", default=None,
              help="Store directory, or a remote SPARQL store sparql+http(s)://[user:password@]host:port/path"
                   "[?update=&gsp=&auth=digest|basic] (default: $CORTEX_STORE, else .cortex/store at the project "
                   "root).")
@click.option("--state-dir", "state_dir", type=click.Path(path_type=Path), default=None, envvar="CORTEX_STATE_DIR",
              help="Where this Cortex keeps tokens, its discovery file and index snapshots when the store is "
                   "remote (default: $CORTEX_STATE_DIR; an embedded store keeps them in its directory).")
@click.option("--agents-dir", "agents_dirs", type=click.Path(path_type=Path), multiple=True,
              help="Directory of agent definitions (repeatable; default: agent_defs/, .cortex/agents/, "
                   ".claude/agents/ at the project root).")
@click.option("--embeddings", type=click.Choice(list(config.EMBEDDING_PROVIDERS)), default="auto",
              show_default=True,
              help="Embedding provider: auto ($CORTEX_EMBEDDINGS, else local: all-MiniLM-L6-v2 on ONNX Runtime, "
                   "the default install), local, torch (the torch extra), openai ($CORTEX_EMBEDDINGS_URL/_MODEL/"
                   "_API_KEY), hash or none.")
@click.version_option(version=__version__, prog_name="cortex")
@click.pass_context
def cli(ctx: click.Context, store: str | None, state_dir: Path | None, agents_dirs: tuple[Path, ...],
        embeddings: str) -> None:
    """Persistent memory for AI agents."""
    if state_dir is not None:
        os.environ["CORTEX_STATE_DIR"] = str(state_dir)  # read where a store location's state is looked up
    from cortex import provenance

    # recorded with what this command writes (PROV-O), until the command ends
    ctx.with_resource(provenance.activity(surface="cli", tool=ctx.invoked_subcommand))
    state = _State(store, agents_dirs, embeddings)
    ctx.obj = state
    ctx.call_on_close(state.close)


pass_state = click.make_pass_decorator(_State)


@cli.command()
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


@cli.command()
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
    with _as_json(state.cortex(read_only=True), fmt == "json") as cx:
        found = cx.recall(agent, query, type=type_, project=project, limit=limit, as_of=as_of,
                          **_filters(tags, scope, source, include_expired, include_superseded))
    _show_memories(found, fmt)


@cli.command()
@click.argument("agent")
@click.argument("query")
@click.option("--mode", default=config.DEFAULT_SEARCH_MODE, show_default=True, help="all, bm25, semantic or hybrid.")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=config.DEFAULT_LIMIT, show_default=True)
@click.option("--explain", is_flag=True, help="Include each hit's score components.")
@click.option("--as-of", default=None, help="What was recorded and valid at this moment (ISO 8601).")
@read_filters
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@pass_state
def search(state: _State, agent: str, query: str, mode: str, type_: str | None, project: str | None, limit: int,
           explain: bool, as_of: str | None, tags: tuple[str, ...], scope: str | None, source: str | None,
           include_expired: bool, include_superseded: bool, fmt: str) -> None:
    """Ranked search: all (AND-token), bm25, semantic or hybrid (semantic modes fall back to bm25, with a
    note on stderr, when they cannot run)."""
    with _as_json(state.cortex(read_only=True), fmt == "json") as cx:
        result = cx.search(agent, query, mode=mode, type=type_, project=project, limit=limit, explain=explain,
                           as_of=as_of, **_filters(tags, scope, source, include_expired, include_superseded))
    note = result.get("note") if isinstance(result, dict) else result.note
    if note:
        click.echo(f"cortex: note: {note}", err=True)
    if fmt == "json":
        _emit(_search_json(result, explain))
    else:
        _show_memories([h.memory for h in result], fmt)


@cli.command()
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


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def touch(state: _State, agent: str, memory_id: str) -> None:
    """Record a use of a memory (usageCount + 1, lastUsedAt = now)."""
    _emit(_memory_json(state.cortex().touch(agent, memory_id)))


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def forget(state: _State, agent: str, memory_id: str) -> None:
    """Delete a memory."""
    if not state.cortex().forget(agent, memory_id):
        raise MemoryNotFoundError(agent, memory_id)
    _emit({"id": memory_id, "forgotten": True})


@cli.command()
@click.argument("agent")
@click.option("--usage", is_flag=True, help="Per source instead: how many memories were shown (injected or "
                                            "touched) and how many an agent's output actually used.")
@pass_state
def stats(state: _State, agent: str, usage: bool) -> None:
    """Count an agent's memories by type (with --usage: per source, how often shown memories were used)."""
    cx = state.cortex(read_only=True)
    _emit(cx.usage_stats(agent) if usage else cx.stats(agent))


@cli.command()
@click.argument("agent")
@click.option("--transcript", "path", required=True, type=click.Path(dir_okay=False),
              help="The session transcript: Claude Code JSONL, a Codex CLI session file, a Cursor or Gemini CLI "
                   "transcript, a JSON list of messages or plain text.")
@click.option("--format", "fmt", type=click.Choice(["claude", "codex", "cursor", "gemini", "messages", "text"]),
              default=None, help="The transcript's format (default: detected).")
@click.option("--project", default=None, help="Project of what it captures (default: the agent's cortex.project).")
@click.option("--no-markers", is_flag=True, help="Leave marker lines to the hooks that already captured them.")
@click.option("--no-summary", is_flag=True, help="No session summary (with a language model).")
@click.option("--no-tasks", is_flag=True, help="Do not record the subagent task outcomes it shows.")
@click.option("--queue", "queued", is_flag=True, help="Through a running server: queue it there and return at once.")
@click.option("--model-first", is_flag=True, hidden=True,
              help="Ask the language model before opening the store (a hook's detached capture: the store is not "
                   "held while the model works).")
@pass_state
def capture(state: _State, agent: str, path: str, fmt: str | None, project: str | None, no_markers: bool,
            no_summary: bool, no_tasks: bool, queued: bool, model_first: bool) -> None:
    """Capture what a session transcript holds for AGENT since its last capture: marker lines, with a language
    model (CORTEX_LLM_URL) learnings and a session summary, subagent task outcomes, and which shown memories it
    used. Redacted, through the quality gate; running it again stores nothing new. Prints the report."""
    prepared = None
    if model_first:
        from cortex.capture.session import prepare
        from cortex.llm import llm_settings

        settings = llm_settings(project_root=state.root)
        if settings is not None:
            prepared = prepare(state.state_dir / "capture.json" if state.state_dir is not None else None, agent,
                               os.path.abspath(path), settings, summary=not no_summary, format=fmt)
    cx = state.cortex()
    if prepared is not None and hasattr(cx, "adopt_extraction"):
        cx.adopt_extraction(*prepared)
    options: dict[str, Any] = {"format": fmt, "project": project, "markers": not no_markers,
                               "summary": not no_summary, "tasks": not no_tasks}
    if queued:
        queue = getattr(cx, "queue_transcript", None)
        if queue is None:
            raise click.UsageError("--queue needs a running server (cortex serve); without one, capture runs here")
        _emit(queue(agent, os.path.abspath(path), **options))
        return
    agent = cx.resolve_agent(agent) or agent  # a hook names a coding agent's type, maybe an alias
    with _as_json(cx) as json_cx:
        report = json_cx.capture_transcript(agent, os.path.abspath(path), **options)
    data = report if isinstance(report, dict) else report.model_dump(mode="json")
    _emit(data)
    if data.get("note"):
        click.echo(f"cortex: {data['note']}", err=True)
    for problem in data.get("problems", [])[:20]:
        click.echo(f"cortex: {problem}", err=True)


@cli.command()
@click.argument("agent")
@click.argument("output", default="-")
@click.option("--session", default=None, help="The session whose start showed the memories (default: none).")
@pass_state
def used(state: _State, agent: str, output: str, session: str | None) -> None:
    """Mark the memories shown at AGENT's latest start that OUTPUT ('-': stdin) drew on (cited, repeated or
    applied): usedCount + 1, which ranking prefers to having been shown. Prints the memories marked."""
    with _as_json(state.cortex()) as cx:
        marked = cx.record_use(agent, _read_content(output), session=session)
    _emit([_memory_json(m) for m in marked])


@cli.command("task-done")
@click.argument("agent")
@click.argument("task")
@click.argument("output", required=False, default="")
@click.option("--status", type=click.Choice(["ok", "failed"]), default="ok", show_default=True,
              help="How the task ended (a failed one should say what went wrong in OUTPUT).")
@click.option("--project", default=None, help="Project of the task (default: the agent's cortex.project).")
@pass_state
def task_done(state: _State, agent: str, task: str, output: str, status: str, project: str | None) -> None:
    """Record that AGENT finished TASK: OUTPUT ('-': stdin) is what came of it; kept as a task_completion
    memory (7 days by default) that a later start on a similar task shows."""
    with _as_json(state.cortex()) as cx:
        memory = cx.record_task(agent, task, _read_content(output) if output else "", status, project=project)
    _emit(_memory_json(memory))


@cli.command("index-status")
@click.argument("agent")
@pass_state
def index_status(state: _State, agent: str) -> None:
    """What AGENT's derived index holds against the store: memories, vectors and their model, pending changes."""
    import dataclasses

    _emit(dataclasses.asdict(state.cortex(read_only=True).index_status(agent)))


@cli.command()
@pass_state
def info(state: _State) -> None:
    """Where the memory is kept (no credentials) and which embedding model it uses."""
    _emit(state.cortex(read_only=True).info())


@cli.command("store-many")
@click.argument("agent")
@click.argument("entries", type=click.File("r", encoding="utf-8"), default="-")
@pass_state
def store_many(state: _State, agent: str, entries: Any) -> None:
    """Store many memories in one atomic write: ENTRIES is a JSON list, or JSON lines, of objects with
    "content" and any field of `cortex store` ("type", "confidence", "tags", "scope"...); '-' (default) reads
    stdin. All are checked first: one bad entry stores nothing and is named."""
    text = entries.read()
    try:
        data = json.loads(text) if text.lstrip().startswith("[") else [
            json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise InvalidInputError("entries", f"is neither a JSON list nor JSON lines: {exc}") from None
    with _as_json(state.cortex()) as cx:
        stored = cx.store_many(agent, data)
    _emit([_memory_json(m) for m in stored])


@cli.command()
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


@cli.command()
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


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
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


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def provenance(state: _State, agent: str, memory_id: str) -> None:
    """Where a memory comes from (PROV-O): who wrote it, the activity that generated it (surface, hook event,
    session, tool), the memories it was derived from, its earlier versions."""
    _emit(state.cortex(read_only=True).provenance(agent, memory_id).model_dump(mode="json"))


@cli.command()
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


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def validate(state: _State, agent: str, memory_id: str) -> None:
    """Confirm a memory is still right: its decay clock restarts, confidence + 0.05."""
    _emit(_memory_json(state.cortex().validate(agent, memory_id)))


@cli.command()
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


@cli.command("export")
@click.argument("target", required=False, metavar="[beads DIR]")
@click.argument("directory", required=False, metavar="")
@click.option("--agent", default=None, help="Export this agent's own memories.")
@click.option("--team", default=None, help="Export this team's memories.")
@click.option("--all", "everything", is_flag=True, help="Export every scope of the store.")
@click.option("--format", "fmt", type=click.Choice(["trig", "nquads", "turtle", "jsonld"]), default=None,
              help="Default: from the -o file's extension, else trig.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file (default: stdout).")
@click.option("--progress/--no-progress", "progress", default=None, help=PROGRESS_HELP)
@pass_state
def export_command(state: _State, target: str | None, directory: str | None, agent: str | None, team: str | None,
                   everything: bool, fmt: str | None, output: Path | None, progress: bool | None) -> None:
    """Export memories as RDF, exactly as stored (versions, supersession, tags, metadata, scopes): one agent,
    one team, or --all. `cortex import` of the file into an empty store gives the same dataset.

    `cortex export beads DIR --agent NAME`: the agent's memories as a Beads knowledge log, DIR/knowledge.jsonl
    (merged with the files there: same key, the newest ts wins; past 1,000 lines the oldest 500 rotate to
    knowledge.archive.jsonl)."""
    if target is not None:
        if target != "beads" or directory is None:
            raise click.UsageError("`cortex export beads DIR --agent NAME` (or `cortex export --agent NAME` for RDF)")
        if agent is None or team is not None or everything or fmt is not None or output is not None:
            raise click.UsageError("`cortex export beads DIR` takes --agent NAME (and no --team, --all, --format, -o)")
        _emit(state.cortex(read_only=True).export_beads(directory, agent=agent))
        return
    from cortex.transfer import EXTENSIONS

    from cortex.state import is_remote

    name = fmt or (EXTENSIONS.get(output.suffix.lower()) if output is not None else None) or "trig"
    if not is_remote(state.store) and not Path(state.store).exists():
        raise InvalidInputError("store", f"there is no store at {state.store}: nothing to export")
    cx = state.cortex(read_only=True)
    with _progress(progress) as report:
        if output is None:
            count = cx.export(sys.stdout.buffer, agent=agent, team=team, all=everything, format=name,
                              progress=report)
        else:
            partial = output.with_name(output.name + ".partial")
            with open(partial, "wb") as out:  # a file is complete or absent
                count = cx.export(out, agent=agent, team=team, all=everything, format=name, progress=report)
            partial.replace(output)
    click.echo(f"cortex: exported {count} triples ({name})", err=True)
    if count == 0:  # a backup is never silently empty
        what = f"agent {agent!r}" if agent else f"team {team!r}" if team else "the store"
        click.echo(f"cortex: warning: {what} holds no memories ({state.printable_store()}): the export is empty",
                   err=True)


#: The memory systems `cortex import SYSTEM FILE` reads (cortex.importers.SYSTEMS, without importing it).
IMPORT_SYSTEMS = ("beads", "mem0", "mcp-memory", "claude")


@cli.command("import")
@click.argument("path", metavar="[SYSTEM] PATH")
@click.argument("file", required=False, metavar="")
@click.option("--format", "fmt", type=click.Choice(["trig", "nquads", "turtle", "jsonld"]), default=None,
              help="RDF: default from the file's extension.")
@click.option("--agent", default=None, help="SYSTEM: the agent whose memory it goes to (required). RDF: for a Turtle "
                                            "file (one graph), the agent whose memories it holds.")
@click.option("--team", default=None, help="RDF, a Turtle file (one graph): the team whose memories it holds.")
@click.option("--dry-run", is_flag=True, help="SYSTEM: write nothing, report what the import would do.")
@click.option("--progress/--no-progress", "progress", default=None, help=PROGRESS_HELP)
@pass_state
def import_command(state: _State, path: str, file: str | None, fmt: str | None, agent: str | None, team: str | None,
                   dry_run: bool, progress: bool | None) -> None:
    """Import an export (`cortex import PATH`): the whole file is checked first and written in one transaction, or
    nothing is (each problem named: the memory, the property, what is wrong). PATH '-' reads stdin (give --format).

    Or another memory system's files (`cortex import SYSTEM PATH --agent NAME`): beads (.beads/memory/knowledge.jsonl,
    or the directory: its archive too), mem0 (the JSON of get_all), mcp-memory (the MCP memory server's
    memory.jsonl), claude (CLAUDE.md, or ~/.claude/projects/<project>/memory). Idempotent (a second run imports
    nothing new), each file checked then written at once; prints the report (imported, skipped, failed with the
    file and line)."""
    if file is not None:
        _import_system(state, path, file, agent, dry_run, progress, fmt, team)
        return
    if path in IMPORT_SYSTEMS and not Path(path).exists():
        raise click.UsageError(f"`cortex import {path} PATH --agent NAME`: give the file (or directory) to import")
    if dry_run:
        raise click.UsageError("--dry-run is for `cortex import SYSTEM PATH` (an RDF import is checked whole anyway)")
    if path != "-" and Path(path).is_dir():
        raise click.BadParameter(f"{path!r} is a directory (an RDF export is a file; a system's directory: "
                                 f"`cortex import SYSTEM {path}`)", param_hint="'[SYSTEM] PATH'")
    source: Any = sys.stdin.buffer.read() if path == "-" else Path(path)
    cx = state.cortex()
    with _progress(progress) as report:
        imported = cx.import_rdf(source, format=fmt, agent=agent, team=team, progress=report)
    _emit({"imported": imported})


def _import_system(state: _State, system: str, path: str, agent: str | None, dry_run: bool, progress: bool | None,
                   fmt: str | None, team: str | None) -> None:
    """`cortex import SYSTEM PATH --agent NAME`."""
    if system not in IMPORT_SYSTEMS:
        raise InvalidInputError("system", f"unknown system {system!r}; use one of {', '.join(IMPORT_SYSTEMS)}, or "
                                          "`cortex import FILE` for an RDF export")
    if agent is None:
        raise click.UsageError(f"`cortex import {system}` needs --agent NAME: the agent whose memory it goes to")
    if fmt is not None or team is not None:
        raise click.UsageError("--format and --team are for an RDF import (`cortex import FILE`)")
    source: Any = sys.stdin.buffer.read() if path == "-" else path
    cx = state.cortex()
    with _progress(progress) as report, _as_json(cx) as api:
        done = api.import_from(system, source, agent=agent, dry_run=dry_run, progress=report,
                               name="stdin" if path == "-" else None)
    data = done if isinstance(done, dict) else done.model_dump(mode="json")
    _emit(data)
    imported = [i for i in data["imported"] if i.get("kind") == "memory"]
    relations = len(data["imported"]) - len(imported)
    click.echo(f"cortex: {'would import' if dry_run else 'imported'} {len(imported)} memories"
               + (f" and {relations} relations" if relations else "")
               + f" from {', '.join(data['files'])}; {len(data['skipped'])} skipped, {len(data['failed'])} failed",
               err=True)
    for item in data["failed"][:20]:
        click.echo(f"cortex: failed: {item['where']}: {item['reason']}", err=True)
    if len(data["failed"]) > 20:
        click.echo(f"cortex: ... and {len(data['failed']) - 20} more failures (in the report)", err=True)


@cli.command("validate-store")
@click.option("--agent", default=None, help="Only this agent's own memories.")
@click.option("--team", default=None, help="Only this team's memories.")
@pass_state
def validate_store_command(state: _State, agent: str | None, team: str | None) -> None:
    """Check the store against the SHACL shapes of what Cortex writes; each violation names the memory, the
    property and the problem (exit 1 when there is one)."""
    found = state.cortex(read_only=True).validate_store(agent=agent, team=team)
    for violation in found:
        click.echo(str(violation))
    click.echo(f"cortex: {len(found)} violation(s)" if found else "cortex: the store conforms", err=True)
    if found:
        raise SystemExit(1)


@cli.command("sparql")
@click.argument("query", required=False)
@click.option("-f", "--file", "path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read the query from this file ('-': stdin) instead of QUERY.")
@click.option("--agent", default=None, help="See only the graphs this agent reads (default: the whole store).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "tsv", "xml", "turtle", "ntriples"]),
              default="table", show_default=True, help="table and the SPARQL result formats; turtle/ntriples "
                                                        "for CONSTRUCT and DESCRIBE.")
@click.option("--limit", type=int, default=None, help="Rows at most (default: CORTEX_SPARQL_LIMIT or 10000).")
@click.option("--timeout", type=float, default=None, help="Seconds at most (default: CORTEX_SPARQL_TIMEOUT or 30).")
@pass_state
def sparql_command(state: _State, query: str | None, path: Path | None, agent: str | None, fmt: str,
                   limit: int | None, timeout: float | None) -> None:
    """Run a read-only SPARQL QUERY over the store (docs/sparql.md has useful ones). Updates are refused."""
    from cortex import sparql

    if (query is None) == (path is None):
        raise InvalidInputError("query", "give the query as QUERY or with -f FILE (one of them)")
    try:
        text = _read_content(query) if query is not None else (
            sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    except OSError as exc:
        raise InvalidInputError("file", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    result = state.cortex(read_only=True).sparql(
        text, agent=agent, limit=limit if limit is not None else sparql.configured_limit(),
        timeout=timeout if timeout is not None else sparql.configured_timeout())
    if fmt != "table":
        if fmt == "json" and result.kind == "graph":
            fmt = "ntriples"
        sys.stdout.write(result.serialize(fmt).decode("utf-8"))
    elif result.kind == "boolean":
        click.echo("true" if result.boolean else "false")
    elif result.kind == "graph":
        sys.stdout.write(result.serialize("turtle").decode("utf-8"))
    else:
        rows = [[_term_text(row.get(v)) for v in result.variables] for row in result.rows]
        click.echo(_table(rows, result.variables))
    if result.truncated:
        click.echo(f"cortex: note: the result was cut at {len(result)} rows (--limit)", err=True)


def _term_text(term: Any) -> str:
    """A term for a terminal: a literal's text, an IRI, or '' for an unbound variable."""
    return "" if term is None else str(getattr(term, "value", term))


@cli.command("list")
@click.argument("agent")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=50, show_default=True,
              help="Memories per page.")
@click.option("--cursor", default=None, help="Continue after the page that printed this next_cursor.")
@click.option("--all", "every", is_flag=True, help="Every page, one after the other.")
@read_filters
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@pass_state
def list_(state: _State, agent: str, type_: str | None, project: str | None, limit: int, cursor: str | None,
          every: bool, tags: tuple[str, ...], scope: str | None, source: str | None, include_expired: bool,
          include_superseded: bool, fmt: str) -> None:
    """Everything AGENT can see (its own, its teams', the swarm's memories), newest first, a page at a time."""
    cx = state.cortex(read_only=True)
    items: list[Memory] = []
    while True:
        page = cx.list_memories(agent, type=type_, project=project, limit=limit, cursor=cursor,
                                **_filters(tags, scope, None if source is None else source, include_expired,
                                           include_superseded))
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


@cli.command()
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


@cli.command()
@click.argument("agent")
@click.option("--project", default=None, help="Project of the captured memories (default: the agent's cortex.project, else global).")
@click.option("--output", "output_file", type=click.File("r", encoding="utf-8"), default="-",
              help="File with the agent's output (default: stdin).")
@pass_state
def end(state: _State, agent: str, project: str | None, output_file: Any) -> None:
    """Capture LEARNED:/PATTERN:/... lines from an agent's output; print what was stored or refreshed."""
    _emit([_memory_json(m) for m in state.cortex().agent_end(agent, output_file.read(), project=project)])


@cli.group()
def notes() -> None:
    """Markdown notes as a source of memory (.cortex/notes/AGENT/ and each agent's cortex: notes:)."""


@notes.command("sync")
@click.argument("agent", required=False)
@click.option("--file", "file", default=None, type=click.Path(dir_okay=False),
              help="Only this file (it must be in a notes directory).")
@pass_state
def notes_sync(state: _State, agent: str | None, file: str | None) -> None:
    """Index the notes of AGENT (default: every agent): a memory per section; unchanged sections keep theirs,
    changed ones are superseded, removed ones leave recall. Prints a report per agent."""
    reports = state.cortex().sync_notes(agent, file=os.path.abspath(file) if file else None)
    _emit([r.model_dump(mode="json") for r in reports])
    for report in reports:
        for skipped in report.skipped[:20]:
            click.echo(f"cortex: {skipped}", err=True)


@notes.command("promote")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--agent", default=None, help="Whose notes (default: the agent whose notes directory holds FILE).")
@click.option("--team", default=None, help="Share it with this team.")
@click.option("--swarm", is_flag=True, help="Share it with the swarm (a lead).")
@pass_state
def notes_promote(state: _State, file: str, agent: str | None, team: str | None, swarm: bool) -> None:
    """Move FILE's memories to a team (--team T) or the swarm (--swarm); later syncs update them there."""
    cx = state.cortex()
    path = os.path.abspath(file)
    if agent is None:
        from cortex.capture.notes import inside

        owners = [a["name"] for a in cx.describe_agents() if not a.get("problems") and a.get("memory_enabled")
                  and any(inside(Path(path), Path(d)) for d in _notes_dirs(cx, a["name"]))]
        if len(owners) != 1:
            raise click.UsageError(f"{path} is in the notes of {len(owners)} agents: give --agent")
        agent = owners[0]
    _emit(cx.promote_notes(agent, path, team=team, swarm=swarm).model_dump(mode="json"))


@notes.command("export")
@click.argument("agent")
@click.argument("directory", type=click.Path(file_okay=False))
@pass_state
def notes_export(state: _State, agent: str, directory: str) -> None:
    """Write AGENT's memories as Markdown files in DIRECTORY (one per type) for a person to read and edit; in
    a notes directory of the agent, a later `cortex notes sync` applies the edits to the memories."""
    _emit(state.cortex().export_notes(agent, os.path.abspath(directory)))


def _notes_dirs(cx: MemoryAPI, agent: str) -> list[str]:
    """The agent's notes directories, from the engine or (through a server) from the definitions here."""
    dirs = getattr(cx, "notes_dirs", None)
    if dirs is not None:
        return list(dirs(agent))
    from cortex.capture.notes import directories

    return [str(d) for d in directories(config.find_project_root(), agent, ())]  # the server checks the file


@cli.command()
@click.argument("agent", required=False)
@click.option("--team", default=None, help="The team's memory.")
@click.option("--swarm", is_flag=True, help="The swarm's memory.")
@click.option("--dry-run", is_flag=True, help="Say exactly what the run would do; write nothing.")
@click.option("--undo", "undo", default=None, metavar="RUN",
              help="Undo this run instead (its id as consolidate printed it, or 'last': the latest of the scope "
                   "named, else of any scope).")
@click.option("--force", is_flag=True, help="With --undo: undo even when a memory changed since the run.")
@click.option("--runs", is_flag=True, help="List the runs instead (of the scope named, else of every scope).")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@pass_state
def consolidate(state: _State, agent: str | None, team: str | None, swarm: bool, dry_run: bool, undo: str | None,
                force: bool, runs: bool, fmt: str) -> None:
    """Consolidate AGENT's own memory (or --team T's, or --swarm's) in one run: near duplicates merged,
    contradictions superseded or listed for review (`cortex review`), recent sessions distilled into learnings.
    Never deletes; prints the report, and on stderr the run's id, which `--undo RUN` takes back exactly."""
    if runs and undo is not None:
        raise click.UsageError("give --runs or --undo, not both")
    if dry_run and (runs or undo is not None):
        raise click.UsageError("--dry-run is for a run (not with --runs or --undo)")
    if force and undo is None:
        raise click.UsageError("--force is for --undo")
    with _as_json(state.cortex()) as cx:
        if runs:
            found = [r if isinstance(r, dict) else r.model_dump(mode="json")
                     for r in cx.consolidation_runs(agent, team=team, swarm=swarm)]
            if fmt == "json":
                _emit(found)
            else:
                click.echo(_table([(r["run"], r["scope"], r["kind"], r["started_at"][:19], (r["undone_at"] or "")[:19],
                                    *(str(r[k]) for k in ("merged", "superseded", "created", "confirmed", "evicted")))
                                   for r in found],
                                  ["run", "scope", "kind", "started", "undone", "merged", "superseded", "created",
                                   "confirmed", "evicted"]))
            return
        if undo is not None:
            undone = cx.undo_consolidation(undo, agent=agent, team=team, swarm=swarm, force=force)
            data = undone if isinstance(undone, dict) else undone.model_dump(mode="json")
            if fmt == "json":
                _emit(data)
            else:
                click.echo(_table([("restored", i) for i in data["restored"]]
                                  + [("removed", i) for i in data["removed"]], ["action", "memory"]))
            click.echo(f"cortex: undid run {data['run']}: {len(data['restored'])} memories restored, "
                       f"{len(data['removed'])} removed", err=True)
            return
        report = cx.consolidate(agent, team=team, swarm=swarm, dry_run=dry_run)
    _show_consolidation(report if isinstance(report, dict) else report.model_dump(mode="json"), fmt)


def _show_consolidation(data: dict[str, Any], fmt: str) -> None:
    """A consolidation report: JSON (or a table of what it did) on stdout, a summary and its problems on stderr."""
    if fmt == "json":
        _emit(data)
    else:
        rows = [("merged", old, m["survivor"], m["reason"]) for m in data["merges"] for old in m["merged"]]
        rows += [("superseded", s["old"], s["new"], s["reason"]) for s in data["superseded"]]
        rows += [("review", r["supersede"], r["keep"], r["reason"]) for r in data["review"]]
        rows += [("created", m["id"], "", _short(m["content"])) for m in data["created"]]
        rows += [("confirmed", c["memory_id"], "", c["reason"]) for c in data["confirmed"]]
        rows += [("evicted", e["memory_id"], "", e["reason"]) for e in data["evicted"]]
        click.echo(_table(rows, ["action", "memory", "by", "why"]))
    counts = (("merged", sum(len(m["merged"]) for m in data["merges"])), ("superseded", len(data["superseded"])),
              ("for review", len(data["review"])), ("created", len(data["created"])),
              ("confirmed", len(data["confirmed"])), ("evicted", len(data["evicted"])),
              ("sessions distilled", len(data["sessions"])))
    done = ", ".join(f"{n} {label}" for label, n in counts)
    examined = f"{data['examined']} memor{'y' if data['examined'] == 1 else 'ies'} of {data['scope']} examined"
    if data["dry_run"]:
        click.echo(f"cortex: dry run: nothing written; the run would do: {done} ({examined})", err=True)
    elif data["run"]:
        click.echo(f"cortex: run {data['run']}: {done} ({examined}); undo it with "
                   f"`cortex consolidate --undo {data['run']}`", err=True)
    else:
        click.echo(f"cortex: nothing to change ({examined})", err=True)
    if data.get("note"):
        click.echo(f"cortex: {data['note']}", err=True)
    for line in [*data.get("pending", []), *data.get("problems", [])][:20]:
        click.echo(f"cortex: {line}", err=True)


@cli.command()
@click.argument("agent", required=False)
@click.option("--team", default=None, help="The team's memory.")
@click.option("--swarm", is_flag=True, help="The swarm's memory.")
@click.option("--accept", nargs=2, default=None, metavar="KEEP SUPERSEDE",
              help="Accept this listed contradiction instead: SUPERSEDE superseded by KEEP (a run of its own).")
@click.option("--dismiss", nargs=2, default=None, metavar="KEEP SUPERSEDE",
              help="Dismiss this listed contradiction instead: keep both, and it is not asked about again (a run of "
                   "its own).")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@pass_state
def review(state: _State, agent: str | None, team: str | None, swarm: bool, accept: tuple[str, str] | None,
           dismiss: tuple[str, str] | None, fmt: str) -> None:
    """List the contradictions consolidation found in AGENT's memory (or --team T's, or --swarm's) and left for
    review, still open; or decide one: `--accept KEEP SUPERSEDE` supersedes SUPERSEDE by KEEP, `--dismiss KEEP
    SUPERSEDE` keeps both. A decision is a run of its own, which `cortex consolidate --undo RUN` takes back."""
    if accept and dismiss:
        raise click.UsageError("give --accept or --dismiss, not both")
    decided = accept or dismiss
    if decided:
        keep, supersede = decided
        with _as_json(state.cortex()) as cx:
            report = cx.resolve_review(keep, supersede, accept=bool(accept), agent=agent, team=team, swarm=swarm)
        data = report if isinstance(report, dict) else report.model_dump(mode="json")
        if fmt == "json":
            _emit(data)
        else:
            click.echo(_table([("superseded", s["old"], s["new"], s["reason"]) for s in data["superseded"]]
                              + [("dismissed", d["supersede"], d["keep"], d["reason"]) for d in data["dismissed"]],
                              ["action", "memory", "by", "why"]))
        what = f"superseded {supersede} by {keep}" if accept else f"dismissed: {keep} and {supersede} both kept"
        click.echo(f"cortex: run {data['run']}: {what}; undo it with `cortex consolidate --undo {data['run']}`",
                   err=True)
        return
    with _as_json(state.cortex(read_only=True)) as cx:
        items = [i if isinstance(i, dict) else i.model_dump(mode="json") for i in cx.review(agent, team=team,
                                                                                            swarm=swarm)]
    if fmt == "json":
        _emit(items)
    else:
        click.echo(_table([(i["supersede"], i["keep"], _short(i["supersede_content"], 40),
                            _short(i["keep_content"], 40), i["reason"]) for i in items],
                          ["supersede", "keep", "old", "new", "why"]))
    click.echo(f"cortex: {len(items)} open contradiction{'' if len(items) == 1 else 's'}", err=True)


@cli.group()
def team() -> None:
    """Teams' shared memory."""


@team.command("round-end")
@click.argument("team_name", metavar="TEAM")
@click.option("--dry-run", is_flag=True, help="Say exactly what it would do; write nothing.")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
@pass_state
def team_round_end(state: _State, team_name: str, dry_run: bool, fmt: str) -> None:
    """The end of a round of TEAM: its lead's extractor distils the round's task outcomes and the members' new
    learnings into the team memory (needs a language model). One run: `cortex consolidate --undo RUN` undoes it."""
    with _as_json(state.cortex()) as cx:
        report = cx.team_round_end(team_name, dry_run=dry_run)
    _show_consolidation(report if isinstance(report, dict) else report.model_dump(mode="json"), fmt)


@cli.group()
def agents() -> None:
    """Declared agents."""


@cli.command()
@click.argument("agent_names", metavar="[AGENT]...", nargs=-1)
@click.option("--force", is_flag=True, help="Re-embed every memory, not only those without a current vector.")
@pass_state
def reindex(state: _State, agent_names: tuple[str, ...], force: bool) -> None:
    """Rebuild indexes from the store and embed what lacks a vector of the current model (default: every
    agent and shared scope with memories in the store; team:NAME and swarm name a shared one)."""
    cx = state.cortex()
    names = list(agent_names) or cx.stored_scopes()
    if cx.info().get("embeddings") is None:
        click.echo("cortex: note: no embedding provider: rebuilding the lexical indexes only", err=True)
    report = {}
    for name in names:
        bars: list[Any] = []

        def progress(done: int, total: int, name: str = name) -> None:
            if not bars:
                bars.append(click.progressbar(length=total, label=f"embedding {name}", file=sys.stderr))
            bars[0].update(done - bars[0].pos)

        report[name] = cx.reindex(name, force=force, progress=progress)
        if bars:
            bars[0].render_finish()
    _emit(report)


@agents.command("list")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json", show_default=True)
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


@agents.command("check")
@pass_state
def agents_check(state: _State) -> None:
    """Report every problem in the agent definitions (exit 1 when there is any)."""
    from cortex.agents import check_dirs, iter_definition_files

    problems = check_dirs(state.agent_dirs)
    for problem in problems:
        click.echo(str(problem))
    count = sum(1 for _ in iter_definition_files(state.agent_dirs))
    if problems:
        click.echo(f"cortex: {len(problems)} problem(s) in {count} definition file(s)", err=True)
        sys.exit(1)
    existing = [str(d) for d in state.agent_dirs if d.is_dir()]
    click.echo(f"cortex: {count} definition file(s) OK in {', '.join(existing) or 'no directory'}",
               err=True)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on; anything but loopback needs tokens (cortex token create).")
@click.option("--port", default=8765, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--idle-exit", type=float, default=None, help="Stop after this many seconds without a request.")
@click.option("--auto", is_flag=True, hidden=True, help="Started in the background by a client.")
@click.option("--max-body-bytes", type=click.IntRange(1), default=None,
              help="Largest request body, larger ones get 413 (default: $CORTEX_MAX_BODY_BYTES, else 32 MiB).")
@click.option("--body-timeout", type=click.FloatRange(0.1), default=None,
              help="Seconds a request body may take to arrive, else 408 (default: $CORTEX_BODY_TIMEOUT, else 30).")
@click.option("--max-concurrency", type=click.IntRange(1), default=None,
              help="Requests in flight beyond which new ones get 503 at once (default 256).")
@pass_state
def serve(state: _State, host: str, port: int, idle_exit: float | None, auto: bool, max_body_bytes: int | None,
          body_timeout: float | None, max_concurrency: int | None) -> None:
    """Own the store and serve the HTTP API (/v1, /docs) and MCP (/mcp) until SIGTERM/SIGINT. A server a
    client started in the background gives the store to this one; a store already served by `cortex serve`
    is left to it (exit 0, saying where)."""
    from cortex.service.server import serve as run_server

    run_server(state.store, agent_dirs=state.agent_dirs, host=host, port=port,
               embeddings=state.embeddings, idle_exit=idle_exit, max_body_bytes=max_body_bytes,
               body_timeout=body_timeout, max_concurrency=max_concurrency, auto=auto,
               announce=lambda note: click.echo(f"cortex: {note}", err=True))
    # the store is flushed and closed and the discovery file removed: skip the interpreter's teardown of torch
    # and the other loaded modules, which took seconds after a SIGTERM with the model loaded
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)


@cli.command()
@pass_state
def mcp(state: _State) -> None:
    """MCP server on stdio, for coding agents. Uses the running server (starting one in the background
    when none runs), so any number of sessions share one store."""
    from cortex.service.auth import ADMIN
    from cortex.service.connect import Reconnecting, ensure_server
    from cortex.service.mcp import build_mcp
    from cortex.service.stdio import run_stdio

    state_dir = state.need_state_dir()
    client = cast("MemoryAPI", Reconnecting(lambda: ensure_server(state_dir, agent_dirs=state.agent_dirs,
                                                                embeddings=state.embeddings, location=state.store)))
    run_stdio(build_mcp(lambda: client, lambda request: ADMIN))  # the server checks the client's token


@cli.group()
def server() -> None:
    """The Cortex server that owns a store: see it, stop it."""


@server.command("status")
@click.option("--all", "all_", is_flag=True, help="Every Cortex server of this user, whatever its store.")
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout.")
@pass_state
def server_status(state: _State, all_: bool, as_json: bool) -> None:
    """Which server owns the store (url, pid, how it was started, uptime, memory); exit 3 when none does."""
    from cortex.service import control

    found = control.every() if all_ else [s for s in [control.status(state.need_state_dir())] if s is not None]
    if as_json:
        _emit([s.as_json() for s in found] if all_ else (found[0].as_json() if found else None))
    else:
        for s in found:
            click.echo(s.describe())
        if not found:
            click.echo("no Cortex server is running" if all_ else
                       f"no Cortex server owns {state.printable_store()}: commands open the store themselves")
    if not found:
        sys.exit(3)


@server.command("stop")
@click.option("--all", "all_", is_flag=True, help="Stop every Cortex server of this user.")
@pass_state
def server_stop(state: _State, all_: bool) -> None:
    """Stop the server that owns the store (gracefully: requests in flight finish, the store is flushed)."""
    from cortex.service import control

    found = control.every() if all_ else [s for s in [control.status(state.need_state_dir())] if s is not None]
    for s in found:
        control.stop(s)
        where = s.info.store or s.state_dir
        click.echo(f"the user's server (pid {s.info.pid}) no longer serves {where}" if s.info.hub else
                   f"stopped pid {s.info.pid} ({where})")
    if not found:
        click.echo("no Cortex server is running" if all_ else f"no Cortex server owns {state.printable_store()}")


@server.command("hub", hidden=True)
@click.option("--id", "ident", required=True, help="The settings' identity (cortex.service.hub.identity).")
def server_hub(ident: str) -> None:
    """The user's background server for ``cortex mcp`` sessions (started by them, not by hand)."""
    from cortex.service import hub

    sys.exit(hub.run(ident))


@cli.group()
def token() -> None:
    """Bearer tokens for the HTTP API and MCP."""


@token.command("create")
@click.option("--agent", "agent", default=None, help="The agent this token may use.")
@click.option("--admin", is_flag=True, help="A token that may do everything.")
@click.option("--force", is_flag=True, help="Create it even for an agent that is not declared (yet).")
@pass_state
def token_create(state: _State, agent: str | None, admin: bool, force: bool) -> None:
    """Create a token and print it (alone, on stdout; it is shown only this once; its id on stderr)."""
    from cortex.errors import AgentNotFoundError
    from cortex.service.auth import TokenStore, token_id

    if admin == (agent is not None):
        raise click.UsageError("give exactly one of --agent NAME or --admin")
    if agent is not None and not force:
        registry = state.registry()
        if registry.get(agent) is None:
            raise AgentNotFoundError(agent, searched=registry.dirs)
    created = TokenStore(state.need_state_dir()).create(agent)
    click.echo(created)
    click.echo(f"cortex: token {token_id(created)} for {agent or 'admin'} (revoke: cortex token revoke "
               f"{token_id(created)})", err=True)


@token.command("list")
@pass_state
def token_list(state: _State) -> None:
    """The tokens (id, agent, creation time); the tokens themselves are not stored."""
    from cortex.service.auth import TokenStore

    _emit(TokenStore(state.need_state_dir()).list())


@token.command("revoke")
@click.argument("token_id")
@pass_state
def token_revoke(state: _State, token_id: str) -> None:
    """Revoke a token by its id (from `cortex token list`); a running server refuses it at once."""
    from cortex.service.auth import TokenStore

    if not TokenStore(state.need_state_dir()).revoke(token_id):
        raise InvalidInputError("token_id", f"no token has the id {token_id!r}")
    _emit({"id": token_id, "revoked": True})


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(args: tuple[str, ...]) -> None:
    """Hooks for coding agents: `cortex hook claude|codex|cursor|gemini EVENT [--agent NAME]` with the hook's JSON
    on stdin, answering in that tool's format. EVENT is one of the tool's events (Claude Code: SessionStart,
    SubagentStart, Stop, SubagentStop, SessionEnd, PostToolUse; docs/agents.md lists each tool's); --agent names the
    main session's agent (its payloads name no agent). Always exits 0, a malformed command line too; failures go
    to .cortex/logs/hooks.log."""
    from cortex.service.hooks import main as hook_main

    hook_main(list(args))


HARNESSES = ["claude", "codex", "cursor", "gemini"]


@cli.command()
@click.argument("target", type=click.Choice(HARNESSES))
@click.option("--agent", default=None,
              help="The main session's agent (declared in an agent directory): also wires the session's start and "
                   "stop hooks to its memory.")
@click.option("--force", is_flag=True, help="Install --agent even when no agent definition declares it.")
def install(target: str, agent: str | None, force: bool) -> None:
    """Wire a coding agent's hooks and Cortex's MCP server into the files it documents, merged into what is
    there (idempotent; committed: the commands run "${CORTEX_BIN:-cortex}", no path of this machine). claude:
    .claude/settings.json, .mcp.json, and this machine's cortex as env CORTEX_BIN in .claude/settings.local.json
    (not committed), so the hooks also work outside the virtualenv; codex: .codex/hooks.json and
    [mcp_servers.cortex] in .codex/config.toml (trust the hooks in Codex's /hooks); cursor: .cursor/hooks.json and
    .cursor/mcp.json; gemini: hooks and mcpServers in .gemini/settings.json."""
    from cortex.service.install import install_harness

    changes = install_harness(config.find_project_root(), target, agent, force=force)
    click.echo("\n".join(changes) if changes else "already installed", err=True)


@cli.command()
@click.argument("target", type=click.Choice(HARNESSES))
def uninstall(target: str) -> None:
    """Remove exactly what `cortex install TARGET` added (for any agent), leaving everything else as it is."""
    from cortex.service.install import uninstall_harness

    changes = uninstall_harness(config.find_project_root(), target)
    click.echo("\n".join(changes) if changes else "nothing to remove", err=True)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="cortex")


if __name__ == "__main__":
    main()
