"""Markdown notes as a source of memory (domain ``notes``): notes sync, promote, export."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cortex import config
from cortex.cli.options import group, name_of
from cortex.cli.output import _emit
from cortex.cli.state import _State, pass_state

if TYPE_CHECKING:
    from cortex.api import MemoryAPI


@group("sync_notes")
def notes() -> None:
    """Markdown notes as a source of memory (.cortex/notes/AGENT/ and each agent's cortex: notes:)."""


@notes.command(name_of("sync_notes"))
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


@notes.command(name_of("promote_notes"))
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


@notes.command(name_of("export_notes"))
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


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (notes,)
