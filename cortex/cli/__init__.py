"""The ``cortex`` command line: a thin adapter over a :class:`cortex.api.MemoryAPI` (the running server's
client, or the store opened here).

Data goes to stdout as JSON (or a block/table with ``--format``); diagnostics go to stderr. Exit codes: 0 on
success, 1 on errors (one line on stderr), 2 on usage errors. Only click and the light base modules are
imported up front: ``cortex --help`` must not pay for numpy, pydantic or the store; and a command run often from a
new process (a read, a write) imports only its own module's commands (:data:`_HOME`).

The group :func:`cli` and its global options live here; the commands live in one module per domain of the facade
(:mod:`cortex.cli.memories`, ... named after :data:`cortex.api.operations.DOMAINS`), named by the table of
operations, and the process commands (serve, mcp, server, token, hook, install) in :mod:`cortex.cli.server`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import click

from cortex import __version__, config
from cortex.cli.state import _State, pass_state
from cortex.errors import CortexError

__all__ = ["cli", "main", "pass_state"]


#: The domain modules whose ``COMMANDS`` are the group's commands, in the order they are added.
_MODULES = ("memories", "reading", "admin", "sessions", "notes", "graph", "consolidation", "server")
#: The module of each command that is run often from a new process: running it imports that module's commands
#: only (the other modules' click declarations cost ~0.4x the interpreter's start). Any other name, a listing or
#: ``--help`` adds every command (:func:`_add_commands`). tests/architecture checks it against the full group.
_HOME = {name: module for module, names in (
    ("reading", ("recall", "search", "list", "stats", "overview", "start", "prompt")),
    ("memories", ("store", "store-many", "get", "update", "history", "provenance", "supersede", "validate", "inject",
                  "touch", "forget", "prune")),
    ("sessions", ("end", "task-done", "capture", "used")),
) for name in names}


class _Group(click.Group):
    """Turns every :class:`CortexError` into one line on stderr and exit status 1; adds its commands when they are
    first asked for (:data:`_HOME`)."""

    _complete = False

    @property
    def commands(self) -> MutableMapping[str, click.Command]:
        """Every command (added now when they were not yet)."""
        if not self._complete:
            self._complete = True  # first: adding a command reads this mapping
            _add_commands(self)
        return self._commands

    @commands.setter
    def commands(self, value: MutableMapping[str, click.Command]) -> None:
        self._commands = value

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``; one of :data:`_HOME` without adding the others."""
        home = _HOME.get(cmd_name)
        if home is None or self._complete:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self._commands:
            for command in importlib.import_module(f"cortex.cli.{home}").COMMANDS:
                self._commands[command.name or ""] = command
        return self._commands.get(cmd_name)

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
    from cortex import discovery, provenance

    # what a process waiting for the store this command holds is told: "a cortex import (pid N) is writing"
    discovery.set_process_label(f"cortex {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "cortex")
    # recorded with what this command writes (PROV-O), until the command ends
    # (a process a hook started records the hook, its event and session: CORTEX_ACTIVITY_*)
    ctx.with_resource(provenance.activity(provenance.Activity.from_environment(os.environ, "cli"),
                                          tool=ctx.invoked_subcommand))
    state = _State(store, agents_dirs, embeddings)
    ctx.obj = state
    ctx.call_on_close(state.close)


def _add_commands(group: click.Group) -> None:
    """Every domain module's commands, and the process commands, into ``group`` (:func:`cli`)."""
    modules = {name: importlib.import_module(f"cortex.cli.{name}") for name in _MODULES}
    for module in modules.values():
        for command in module.COMMANDS:
            group.add_command(command)
    # a process command: it reads the definitions, not the store
    modules["admin"].agents.add_command(modules["server"].agents_check)
    from cortex.cli import generic

    generic.add_commands(group)  # an operation of the table no module has a command for: from its row and method


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="cortex")
