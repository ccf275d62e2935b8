"""Consolidation (domain ``consolidation``): consolidate (a run, its undo, the runs), review, team
round-end."""

from __future__ import annotations

import click

from cortex.cli.options import command, group, json_or_table, name_of
from cortex.cli.output import _as_json, _emit, _short, _show_consolidation, _table
from cortex.cli.state import _State, pass_state


@command("consolidate")
@click.argument("agent", required=False)
@click.option("--team", default=None, help="The team's memory.")
@click.option("--swarm", is_flag=True, help="The swarm's memory.")
@click.option("--dry-run", is_flag=True, help="Say exactly what the run would do; write nothing.")
@click.option("--undo", "undo", default=None, metavar="RUN",
              help="Undo this run instead (its id as consolidate printed it, or 'last': the latest of the scope "
                   "named, else of any scope).")
@click.option("--force", is_flag=True, help="With --undo: undo even when a memory changed since the run.")
@click.option("--runs", is_flag=True, help="List the runs instead (of the scope named, else of every scope).")
@json_or_table
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


@command("review")
@click.argument("agent", required=False)
@click.option("--team", default=None, help="The team's memory.")
@click.option("--swarm", is_flag=True, help="The swarm's memory.")
@click.option("--accept", nargs=2, default=None, metavar="KEEP SUPERSEDE",
              help="Accept this listed contradiction instead: SUPERSEDE superseded by KEEP (a run of its own).")
@click.option("--dismiss", nargs=2, default=None, metavar="KEEP SUPERSEDE",
              help="Dismiss this listed contradiction instead: keep both, and it is not asked about again (a run of "
                   "its own).")
@json_or_table
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


@group("team_round_end")
def team() -> None:
    """Teams' shared memory."""


@team.command(name_of("team_round_end"))
@click.argument("team_name", metavar="TEAM")
@click.option("--dry-run", is_flag=True, help="Say exactly what it would do; write nothing.")
@json_or_table
@pass_state
def team_round_end(state: _State, team_name: str, dry_run: bool, fmt: str) -> None:
    """The end of a round of TEAM: its lead's extractor distils the round's task outcomes and the members' new
    learnings into the team memory (needs a language model). One run: `cortex consolidate --undo RUN` undoes it."""
    with _as_json(state.cortex()) as cx:
        report = cx.team_round_end(team_name, dry_run=dry_run)
    _show_consolidation(report if isinstance(report, dict) else report.model_dump(mode="json"), fmt)


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (consolidate, review, team)
