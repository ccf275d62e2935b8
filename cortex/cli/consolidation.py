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
@click.option("--approve", default=None, metavar="ID",
              help="Approve this memory held for review instead: it is written (a run of its own).")
@click.option("--reject", default=None, metavar="ID",
              help="Reject this memory held for review instead: it is never written, and stays in the record of "
                   "the run that held it (a run of its own).")
@json_or_table
@pass_state
def review(state: _State, agent: str | None, team: str | None, swarm: bool, accept: tuple[str, str] | None,
           dismiss: tuple[str, str] | None, approve: str | None, reject: str | None, fmt: str) -> None:
    """List the review queue of AGENT's memory (or --team T's, or --swarm's): the contradictions consolidation
    found and left for review, still open, and the memories held for review (what an automatic channel would
    have written where it reaches other agents: content, who, origin, why held). Or decide one: `--accept KEEP
    SUPERSEDE` supersedes SUPERSEDE by KEEP, `--dismiss KEEP SUPERSEDE` keeps both, `--approve ID` writes a held
    memory, `--reject ID` rejects it. A decision is a run of its own, which `cortex consolidate --undo RUN`
    takes back."""
    if sum(1 for given in (accept, dismiss, approve, reject) if given) > 1:
        raise click.UsageError("give one of --accept, --dismiss, --approve or --reject, not both")
    if sum(1 for given in (agent, team, swarm or None) if given is not None) != 1:
        raise click.UsageError("name exactly one queue: AGENT, --team TEAM or --swarm")
    decided = accept or dismiss or ((approve, "") if approve else (reject, "") if reject else None)
    if decided:
        keep, supersede = decided
        with _as_json(state.cortex()) as cx:
            report = cx.resolve_review(keep, supersede, accept=bool(accept or approve), agent=agent, team=team,
                                       swarm=swarm)
        data = report if isinstance(report, dict) else report.model_dump(mode="json")
        if fmt == "json":
            _emit(data)
        else:
            click.echo(_table([("superseded", s["old"], s["new"], s["reason"]) for s in data["superseded"]]
                              + [("approved", m["id"], "", _short(m["content"], 60)) for m in data["created"]]
                              + [("dismissed" if d["kind"] == "contradiction" else "rejected", d["supersede"]
                                  or d["keep"], d["keep"] if d["supersede"] else "", d["reason"])
                                 for d in data["dismissed"]],
                              ["action", "memory", "by", "why"]))
        what = (f"superseded {supersede} by {keep}" if accept else f"dismissed: {keep} and {supersede} both kept"
                if dismiss else f"approved {keep}: written" if approve else f"rejected {keep}: never written")
        click.echo(f"cortex: run {data['run']}: {what}; undo it with `cortex consolidate --undo {data['run']}`",
                   err=True)
        return
    with _as_json(state.cortex(read_only=True)) as cx:
        items = [i if isinstance(i, dict) else i.model_dump(mode="json") for i in cx.review(agent, team=team,
                                                                                            swarm=swarm)]
    if fmt == "json":
        _emit(items)
    else:
        contradictions = [i for i in items if i.get("kind", "contradiction") == "contradiction"]
        held = [i for i in items if i.get("kind") == "held"]
        if contradictions or not held:
            click.echo(_table([(i["supersede"], i["keep"], _short(i["supersede_content"], 40),
                                _short(i["keep_content"], 40), i["reason"]) for i in contradictions],
                              ["supersede", "keep", "old", "new", "why"]))
        if held:
            click.echo(_table([(i["keep"], _short(i["keep_content"], 50), i.get("agent") or "", i["scope"],
                                _origin(i.get("origin") or {}), i["reason"]) for i in held],
                              ["held", "content", "agent", "scope", "origin", "why held"]))
    count = len(items) - len([i for i in items if i.get("kind") == "held"])
    click.echo(f"cortex: {count} open contradiction{'' if count == 1 else 's'}, "
               f"{len(items) - count} held for review", err=True)


def _origin(origin: dict[str, object]) -> str:
    """A held memory's origin in one cell: channel, then what else it says (session, file, tool...)."""
    return " ".join(f"{k}={v}" for k, v in origin.items() if v is not None)


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


@team.command(name_of("team_round"))
@click.argument("team_name", metavar="TEAM")
@json_or_table
@pass_state
def team_round(state: _State, team_name: str, fmt: str) -> None:
    """TEAM's current round: since its last round end, what each member stored (task outcomes and learnings),
    what the next `cortex team round-end` distils."""
    with _as_json(state.cortex()) as cx:
        found = cx.team_round(team_name)
    data = found if isinstance(found, dict) else found.model_dump(mode="json")
    if fmt == "json":
        _emit(data)
        return
    click.echo(f"team {data['team']}: round since {data['since']}"
               + (f" (run {data['last_round_end']['run']})" if data.get("last_round_end") else ""))
    rows = [[member["agent"], m["id"][:8], m["source"], _short(m["content"], 70)]
            for member in data["members"] for m in member["memories"]]
    click.echo(_table(rows, ["member", "id", "source", "content"]) if rows else "nothing stored by a member since")


#: The commands of this module, which :mod:`cortex.cli` adds to its group.
COMMANDS: tuple[click.Command, ...] = (consolidate, review, team)
