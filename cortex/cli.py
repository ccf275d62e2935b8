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
from collections.abc import Sequence
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
        self.agent_dirs = list(agents_dirs) or config.discover_agent_dirs(self.root)
        self._cx: MemoryAPI | None = None

    def need_state_dir(self) -> Path:
        """The store's state directory (tokens, the server's discovery file), for commands that need one."""
        if self.state_dir is None:
            raise InvalidInputError("store", f"{self.store} has no local state directory for this command")
        return self.state_dir

    def registry(self) -> AgentRegistry:
        """The agents of the discovered directories; each problem is a warning on stderr."""
        from cortex.agents import AgentRegistry

        registry = AgentRegistry()
        for problem in registry.load(self.agent_dirs):
            click.echo(f"cortex: warning: {problem}", err=True)
        return registry

    def cortex(self, *, read_only: bool = False) -> MemoryAPI:
        """The running server's client when one owns the store; else a background server when the local
        embedding model would be loaded; else the store opened here (see
        :func:`cortex.service.connect.for_cli`)."""
        if self._cx is None:
            from cortex.service.client import RemoteCortex
            from cortex.service.connect import for_cli

            cx = for_cli(self.store, embeddings=self.embeddings, agent_dirs=self.agent_dirs, read_only=read_only,
                         announce=lambda note: click.echo(f"cortex: note: {note}", err=True))
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
        try:
            return super().invoke(ctx)
        except CortexError as exc:
            click.echo(f"cortex: error: {exc}", err=True)
            ctx.exit(1)
        except UnicodeDecodeError as exc:
            click.echo(f"cortex: error: input is not valid UTF-8 ({exc.reason} at byte {exc.start})", err=True)
            ctx.exit(1)


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _memory_json(memory: Memory) -> dict[str, Any]:
    return memory.model_dump(mode="json")


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
        rows = [
            (m.id, m.type.value, m.project, f"{m.confidence:.2f}", str(m.usage_count),
             m.content if len(m.content) <= 60 else m.content[:59] + "…")
            for m in memories
        ]
        click.echo(_table(rows, ["id", "type", "project", "conf", "uses", "content"]))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", "store", default=None,
              help="Store directory (default: $CORTEX_STORE, else .cortex/store at the project root).")
@click.option("--agents-dir", "agents_dirs", type=click.Path(path_type=Path), multiple=True,
              help="Directory of agent definitions (repeatable; default: agent_defs/, .cortex/agents/, "
                   ".claude/agents/ at the project root).")
@click.option("--embeddings", type=click.Choice(list(config.EMBEDDING_PROVIDERS)), default="auto",
              show_default=True,
              help="Embedding provider: auto ($CORTEX_EMBEDDINGS, else local when the semantic extra is "
                   "installed), local, openai ($CORTEX_EMBEDDINGS_URL/_MODEL/_API_KEY), hash or none. With "
                   "local, commands go through a background server that keeps the model loaded "
                   "($CORTEX_NO_SERVER=1: load it in each command instead).")
@click.version_option(version=__version__, prog_name="cortex")
@click.pass_context
def cli(ctx: click.Context, store: str | None, agents_dirs: tuple[Path, ...], embeddings: str) -> None:
    """Persistent memory for AI agents."""
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
@pass_state
def store(state: _State, agent: str, content: str, type_: str, project: str, confidence: float) -> None:
    """Store a memory (CONTENT '-' reads it from stdin)."""
    if content == "-":
        content = sys.stdin.read().removesuffix("\n").removesuffix("\r")  # what `echo` and editors add
    _emit(_memory_json(state.cortex().store(agent, content, type=type_, project=project, confidence=confidence)))


@cli.command()
@click.argument("agent")
@click.argument("query", required=False)
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=config.DEFAULT_LIMIT, show_default=True)
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@pass_state
def recall(state: _State, agent: str, query: str | None, type_: str | None, project: str | None,
           limit: int, fmt: str) -> None:
    """Memories containing every word of QUERY (all memories without one)."""
    _show_memories(state.cortex(read_only=True).recall(agent, query, type=type_, project=project, limit=limit), fmt)


@cli.command()
@click.argument("agent")
@click.argument("query")
@click.option("--mode", default=config.DEFAULT_SEARCH_MODE, show_default=True, help="all, bm25, semantic or hybrid.")
@click.option("--type", "type_", default=None, help=TYPE_HELP)
@click.option("--project", default=None, help="Only memories of this project.")
@click.option("--limit", type=click.IntRange(1, config.MAX_LIMIT), default=config.DEFAULT_LIMIT, show_default=True)
@click.option("--explain", is_flag=True, help="Include each hit's score components.")
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@pass_state
def search(state: _State, agent: str, query: str, mode: str, type_: str | None, project: str | None, limit: int,
           explain: bool, fmt: str) -> None:
    """Ranked search: all (AND-token), bm25, semantic or hybrid (semantic modes fall back to bm25, with a
    note on stderr, when they cannot run)."""
    result = state.cortex(read_only=True).search(agent, query, mode=mode, type=type_, project=project, limit=limit,
                                   explain=explain)
    if result.note:
        click.echo(f"cortex: note: {result.note}", err=True)
    if fmt == "json":
        _emit(result.model_dump(mode="json", exclude_none=not explain))
    else:
        _show_memories([h.memory for h in result], fmt)


@cli.command()
@click.argument("agent")
@click.argument("memory_id")
@pass_state
def get(state: _State, agent: str, memory_id: str) -> None:
    """Show one memory."""
    memory = state.cortex(read_only=True).get(agent, memory_id)
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
@pass_state
def stats(state: _State, agent: str) -> None:
    """Count an agent's memories by type."""
    _emit(state.cortex(read_only=True).stats(agent))


@cli.command()
@click.argument("agent")
@click.option("--min-confidence", type=float, default=config.DEFAULT_MIN_CONFIDENCE, show_default=True,
              help="Delete memories with confidence strictly below this.")
@click.option("--max-age", default=None, help="Also delete memories unused for longer than this (30d, 12h, 90m).")
@click.option("--dry-run", is_flag=True, help="Only report what would be deleted.")
@pass_state
def prune(state: _State, agent: str, min_confidence: float, max_age: str | None, dry_run: bool) -> None:
    """Delete low-confidence or long-unused memories."""
    ids = state.cortex().prune_candidates(agent, min_confidence, max_age, delete=not dry_run)
    _emit({"count": len(ids), "ids": ids, "dry_run": dry_run})  # the same answer as the HTTP route


@cli.command()
@click.argument("agent")
@click.option("--task", default=None, help="What the agent is about to do.")
@click.option("--project", default=None, help="Project of the task: its memories and the global ones (default: the agent's cortex.project, else all).")
@click.option("--limit", type=click.IntRange(1, 1000), default=None)
@click.option("--max-chars", type=click.IntRange(1), default=None)
@pass_state
def start(state: _State, agent: str, task: str | None, project: str | None, limit: int | None,
          max_chars: int | None) -> None:
    """Print the <agent-memory> block for an agent starting on TASK (touches what it shows)."""
    block = state.cortex().agent_start(agent, task=task, project=project, limit=limit, max_chars=max_chars)
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
def agents() -> None:
    """Declared agents."""


@cli.command()
@click.argument("agent_names", metavar="[AGENT]...", nargs=-1)
@click.option("--force", is_flag=True, help="Re-embed every memory, not only those without a current vector.")
@pass_state
def reindex(state: _State, agent_names: tuple[str, ...], force: bool) -> None:
    """Rebuild indexes from the store and embed what lacks a vector of the current model (default: every
    agent with memories in the store)."""
    cx = state.cortex()
    names = list(agent_names) or cx.stored_agents()
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
    items = [
        {"name": d.name, "description": d.description, "memory": d.memory, "memory_enabled": d.memory_enabled,
         "project": d.settings.project, "path": str(d.path) if d.path else None}
        for d in registry.list()
    ]
    if fmt == "json":
        _emit(items)
    else:
        rows = [(str(i["name"]), "yes" if i["memory_enabled"] else "no", str(i["path"] or ""), str(i["description"]))
                for i in items]
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
    click.echo(f"cortex: {count} definition file(s) OK in {', '.join(map(str, state.agent_dirs)) or 'no directory'}",
               err=True)


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on; anything but loopback needs tokens (cortex token create).")
@click.option("--port", default=8765, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--idle-exit", type=float, default=None, help="Stop after this many seconds without a request.")
@click.option("--max-body-bytes", type=click.IntRange(1), default=None,
              help="Largest request body, larger ones get 413 (default: $CORTEX_MAX_BODY_BYTES, else 32 MiB).")
@click.option("--body-timeout", type=click.FloatRange(0.1), default=None,
              help="Seconds a request body may take to arrive, else 408 (default: $CORTEX_BODY_TIMEOUT, else 30).")
@click.option("--max-concurrency", type=click.IntRange(1), default=None,
              help="Requests in flight beyond which new ones get 503 at once (default 256).")
@pass_state
def serve(state: _State, host: str, port: int, idle_exit: float | None, max_body_bytes: int | None,
          body_timeout: float | None, max_concurrency: int | None) -> None:
    """Own the store and serve the HTTP API (/v1, /docs) and MCP (/mcp) until SIGTERM/SIGINT."""
    from cortex.service.server import serve as run_server

    run_server(state.store, agent_dirs=state.agent_dirs, host=host, port=port,
               embeddings=state.embeddings, idle_exit=idle_exit, max_body_bytes=max_body_bytes,
               body_timeout=body_timeout, max_concurrency=max_concurrency)
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

    store = state.need_state_dir()
    client = cast("MemoryAPI", Reconnecting(lambda: ensure_server(store, agent_dirs=state.agent_dirs,
                                                                embeddings=state.embeddings)))
    run_stdio(build_mcp(lambda: client, lambda request: ADMIN))  # the server checks the client's token


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


@cli.group()
def hook() -> None:
    """Hooks for coding agents (always exit 0; failures go to .cortex/logs/hooks.log)."""


@hook.command("claude")
@click.argument("event")
@click.option("--agent", default=None, help="The main session's agent (SessionStart and Stop have no agent_type).")
def hook_claude(event: str, agent: str | None) -> None:
    """Claude Code hook: EVENT is SessionStart, SubagentStart, Stop or SubagentStop; the payload is on stdin."""
    from cortex.service.hooks import run

    out = run(event, sys.stdin.read(), agent)
    if out:
        click.echo(out)


@cli.command()
@click.argument("target", type=click.Choice(["claude"]))
@click.option("--agent", default=None,
              help="The main session's agent: also wires SessionStart and Stop to its memory.")
def install(target: str, agent: str | None) -> None:
    """Add Cortex's hooks to .claude/settings.json and its MCP server to .mcp.json (idempotent). The commands
    name this Python interpreter, so they work when Claude Code runs outside the virtualenv."""
    from cortex.service.install import install as run_install

    changes = run_install(config.find_project_root(), agent)
    click.echo("\n".join(changes) if changes else "already installed", err=True)


@cli.command()
@click.argument("target", type=click.Choice(["claude"]))
def uninstall(target: str) -> None:
    """Remove exactly what `cortex install claude` added."""
    from cortex.service.install import uninstall as run_uninstall

    changes = run_uninstall(config.find_project_root())
    click.echo("\n".join(changes) if changes else "nothing to remove", err=True)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="cortex")


if __name__ == "__main__":
    main()
