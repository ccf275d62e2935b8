"""The process commands (:data:`cortex.api.operations.CLI_ONLY`): serve, mcp, server status|stop|hub, token
create|list|revoke, hook, install, uninstall, and agents check."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, cast

import click

from cortex import config
from cortex.cli.options import command, group, name_of
from cortex.cli.output import _emit
from cortex.cli.state import _State, pass_state
from cortex.errors import InvalidInputError

if TYPE_CHECKING:
    from cortex.api import MemoryAPI


@command("serve")
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


@command("mcp")
@click.option("--tools", default=None, metavar="SET",
              help="The tools listed: lean (the default: everyday memory work, under 10k tokens), all, or a comma "
                   "list of tool names and those words. Default: $CORTEX_MCP_TOOLS, else lean.")
@pass_state
def mcp(state: _State, tools: str | None) -> None:
    """MCP server on stdio, for coding agents. Uses the running server (starting one in the background
    when none runs), so any number of sessions share one store."""
    from cortex.service.auth import ADMIN
    from cortex.service.connect import Reconnecting, ensure_server
    from cortex.service.mcp import build_mcp
    from cortex.service.stdio import run_stdio

    state_dir = state.need_state_dir()
    client = cast("MemoryAPI", Reconnecting(lambda: ensure_server(state_dir, agent_dirs=state.agent_dirs,
                                                                embeddings=state.embeddings, location=state.store)))
    try:
        server = build_mcp(lambda: client, lambda request: ADMIN, tools)  # the server checks the client's token
    except InvalidInputError as exc:
        raise click.BadParameter(exc.reason, param_hint="--tools") from None
    run_stdio(server)


@group("server status")
def server() -> None:
    """The Cortex server that owns a store: see it, stop it."""


@server.command(name_of("server status"))
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


@server.command(name_of("server stop"))
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


@server.command(name_of("server hub"), hidden=True)
@click.option("--id", "ident", required=True, help="The settings' identity (cortex.service.hub.identity).")
def server_hub(ident: str) -> None:
    """The user's background server for ``cortex mcp`` sessions (started by them, not by hand)."""
    from cortex.service import hub

    sys.exit(hub.run(ident))


@group("token create")
def token() -> None:
    """Bearer tokens for the HTTP API and MCP."""


@token.command(name_of("token create"))
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


@token.command(name_of("token list"))
@pass_state
def token_list(state: _State) -> None:
    """The tokens (id, agent, creation time); the tokens themselves are not stored."""
    from cortex.service.auth import TokenStore

    _emit(TokenStore(state.need_state_dir()).list())


@token.command(name_of("token revoke"))
@click.argument("token_id")
@pass_state
def token_revoke(state: _State, token_id: str) -> None:
    """Revoke a token by its id (from `cortex token list`); a running server refuses it at once."""
    from cortex.service.auth import TokenStore

    if not TokenStore(state.need_state_dir()).revoke(token_id):
        raise InvalidInputError("token_id", f"no token has the id {token_id!r}")
    _emit({"id": token_id, "revoked": True})


@command("hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook(args: tuple[str, ...]) -> None:
    """Hooks for coding agents: `cortex hook claude|codex|cursor|gemini EVENT [--agent NAME]` with the hook's JSON
    on stdin, answering in that tool's format. EVENT is one of the tool's events (Claude Code: SessionStart,
    SubagentStart, Stop, SubagentStop, SessionEnd, PostToolUse; docs/agents.md lists each tool's); --agent names the
    main session's agent (its payloads name no agent). Always exits 0, a malformed command line too; failures go
    to .cortex/logs/hooks.log."""
    from cortex.service.hooks import main as hook_main

    hook_main(list(args))


HARNESSES = ["claude", "codex", "cursor", "gemini", "hermes"]


@command("install")
@click.argument("target", type=click.Choice(HARNESSES))
@click.option("--agent", default=None,
              help="The main session's agent (declared in an agent directory): also wires the session's start and "
                   "stop hooks to its memory.")
@click.option("--force", is_flag=True, help="Install --agent even when no agent definition declares it.")
@click.option("--prompt-recall/--no-prompt-recall", default=True,
              help="With --agent: add the few memories each substantive prompt needs that the session lacks "
                   "(claude, codex: UserPromptSubmit; gemini: BeforeAgent). --no-prompt-recall removes that hook.")
def install(target: str, agent: str | None, force: bool, prompt_recall: bool) -> None:
    """Wire a coding agent's hooks and Cortex's MCP server into the files it documents, merged into what is
    there (idempotent), and .cortex/.gitignore (store, state, logs). claude: subagent and tool hooks in
    .claude/settings.json (committed: "${CORTEX_BIN:-cortex}"), this machine's cortex as env CORTEX_BIN and the
    --agent's main-session hooks by absolute path in .claude/settings.local.json, and the MCP server by absolute
    path in ~/.claude.json (local scope, personal); codex: .codex/hooks.json and [mcp_servers.cortex] in
    .codex/config.toml by absolute path, listed in .git/info/exclude (trust the hooks in Codex's /hooks); cursor:
    .cursor/hooks.json and .cursor/mcp.json; gemini: hooks and mcpServers in .gemini/settings.json by absolute
    path, listed in .git/info/exclude; hermes: Cortex as Hermes Agent's
    memory provider ($HERMES_HOME/plugins/cortex/ and memory.provider: cortex in $HERMES_HOME/config.yaml)."""
    from cortex.service.install import install_harness

    changes = install_harness(config.find_project_root(), target, agent, force=force, prompt_recall=prompt_recall)
    click.echo("\n".join(changes) if changes else "already installed", err=True)


@command("uninstall")
@click.argument("target", type=click.Choice(HARNESSES))
def uninstall(target: str) -> None:
    """Remove exactly what `cortex install TARGET` added (for any agent), leaving everything else as it is."""
    from cortex.service.install import uninstall_harness

    changes = uninstall_harness(config.find_project_root(), target)
    click.echo("\n".join(changes) if changes else "nothing to remove", err=True)


@command("agents check")
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


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (serve, mcp, server, token, hook, install, uninstall)
