"""The consolidation routes (:mod:`cortex.api.operations`, domain ``consolidation``): a scope's run, its undo and
list, the review of contradictions, a team's round end. Who may: :meth:`Principal.require_consolidation`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from cortex.consolidation.report import ConsolidationReport, ReviewItem, RunInfo, TeamRound, UndoReport
from cortex.core import Cortex
from cortex.errors import InvalidInputError
from cortex.service.auth import Principal
from cortex.service.http.bodies import ConsolidateBody, ReviewBody, RoundEndBody, UndoBody
from cortex.service.http.routing import Caller, Cx, Queue, operation
from cortex.service.queue import CaptureQueue

router = APIRouter()


def _consolidating(cx: Cortex, caller: Principal, agent: str | None, team: str | None, swarm: bool) -> str | None:
    """The agent a consolidation route names, once the caller may (:meth:`Principal.require_consolidation`)."""
    return caller.require_consolidation(agent, team, swarm, cx.describe_agents)


@operation(router, "consolidate")
def consolidate(caller: Caller, cx: Cx,
                body: Annotated[ConsolidateBody, Body()] = ConsolidateBody()) -> ConsolidationReport:
    """Consolidate one scope in one run (docs/consolidation.md): near duplicates merged, contradictions the
    language model finds superseded or listed for review, the agent's recent sessions distilled. ``run`` in
    the answer is the id to undo it with (null for a dry run or a run that changed nothing). Name exactly one
    of ``agent``, ``team`` or ``swarm``. An agent token consolidates its own agent (the default when it names
    none); a team's memory needs an admin token or a lead of the team's, the swarm's an admin's or a lead's
    (403 otherwise)."""
    agent = _consolidating(cx, caller, body.agent, body.team, body.swarm)
    return cx.consolidate(agent, team=body.team, swarm=body.swarm, dry_run=body.dry_run)


@operation(router, "undo_consolidation")
def undo_consolidation(caller: Caller, cx: Cx, body: Annotated[UndoBody, Body()] = UndoBody()) -> UndoReport:
    """Undo a consolidation run: what it changed back as it was, what it created removed; its record stays,
    marked undone. 404 for a run the store has no record of, 409 (nothing changed) when a memory changed
    since, unless ``force``. The same rule as consolidate: an agent token undoes its own agent's runs (naming
    no scope: its own), a team's or the swarm's need an admin token or a lead's; naming no scope, an admin
    undoes the latest run of any scope."""
    agent = _consolidating(cx, caller, body.agent, body.team, body.swarm)
    return cx.undo_consolidation(body.run, agent=agent, team=body.team, swarm=body.swarm, force=body.force)


@operation(router, "consolidation_runs")
def consolidation_runs(caller: Caller, cx: Cx, agent: str | None = None, team: str | None = None,
                       swarm: bool = False) -> list[RunInfo]:
    """The consolidation runs of one scope (an admin naming none: of every scope), the latest first, undone
    ones too. Who may: as for consolidate."""
    name = _consolidating(cx, caller, agent, team, swarm)
    return cx.consolidation_runs(name, team=team, swarm=swarm)


@operation(router, "review")
def review(caller: Caller, cx: Cx, agent: str | None = None, team: str | None = None,
           swarm: bool = False) -> list[ReviewItem]:
    """The review queue: the contradictions consolidation found and did not apply, still open (both memories
    current), and the memories held for review (``kind`` ``held``: what an automatic channel would have written
    where it reaches other agents, with its origin and why it was held). Decide one with ``POST /v1/review``.
    Name one scope; who may: as for consolidate (a team's: an admin token or a lead of the team's), and a lead
    the queue of a member of one of its teams."""
    name = caller.require_review(agent, team, swarm, cx.describe_agents)
    return cx.review(name, team=team, swarm=swarm)


@operation(router, "resolve_review")
def resolve_review(caller: Caller, cx: Cx, body: ReviewBody) -> ConsolidationReport:
    """Decide an item the review lists. A contradiction: ``accept`` (the default) supersedes ``supersede`` by
    ``keep``, ``accept=false`` keeps both and takes the pair off the list. A held memory (``keep`` its id, no
    ``supersede``): ``accept`` approves and writes it, ``accept=false`` rejects it. Each is a run of its own
    (kind ``review``, ``run`` in the answer), undone like any other. 422 when the review lists no such item. Who
    may: as for consolidate."""
    name = _consolidating(cx, caller, body.agent, body.team, body.swarm) if body.supersede else \
        caller.require_held_decision(body.agent, body.team, body.swarm, cx.describe_agents)
    return cx.resolve_review(body.keep, body.supersede, accept=body.accept, agent=name, team=body.team,
                             swarm=body.swarm)


@operation(router, "team_round")
def team_round(team: str, cx: Cx) -> TeamRound:
    """A team's current round: since when (its last round end not undone: ``last_round_end``), and what each
    member stored since (``members``: its task outcomes and learnings, newest first), what the next round end
    will distil. An admin token, or a member's: a lead of the team sees every member, another member only
    itself (403 for an agent not of the team)."""
    return cx.team_round(team)


@operation(router, "review_all")
def review_all(caller: Caller, cx: Cx) -> list[ReviewItem]:
    """Every item the caller may review, of every queue at once (each names its ``scope``: ``agent:NAME``,
    ``team:NAME`` or ``swarm``): an admin token every declared agent's, every team's with a lead and the swarm's;
    an agent token its own agent's (what was held there is decided by a lead of its teams or an admin), and a
    lead's besides the queues of the teams it leads, the swarm's and the memories held in its teams' members'
    memory. Decide one with ``POST /v1/review``."""
    return cx.review_all()


@operation(router, "team_round_end", response_model=ConsolidationReport,
           responses={202: {"description": "Queued (wait=false): run by the server's queue"}})
def team_round_end(team: str, caller: Caller, cx: Cx, queue: Queue,
                   body: Annotated[RoundEndBody, Body()] = RoundEndBody()) -> Any:
    """The end of a round of the team: its lead's extractor distils the round's task outcomes and the members'
    new learnings into the team memory (one run, undone like any other; needs a language model). An admin
    token or the token of a lead of the team (403 otherwise). ``wait=false`` queues it in the server (202,
    ``{"queued", "waiting"}``): what a lead's Stop hook does, so that the model's seconds are not its."""
    _consolidating(cx, caller, None, team, False)
    if not body.wait:
        return JSONResponse(_queue_round_end(cx, queue, team, body.dry_run), status_code=202)
    return cx.team_round_end(team, dry_run=body.dry_run)


def _queue_round_end(cx: Cortex, queue: CaptureQueue, team: str, dry_run: bool) -> dict[str, Any]:
    """Check now what can be checked without the model, then queue the round end."""
    if dry_run:
        raise InvalidInputError("wait", "a dry run answers with what it would do: send it with wait true")
    if cx.llm is None:
        raise InvalidInputError("llm", "a team's round end needs a language model (CORTEX_LLM_URL)")
    if team in {t for d in cx.agents.list() if d.memory_enabled for t in d.settings.parents}:
        raise InvalidInputError("team", f"team {team!r} is temporary: it reads its parent's memory and has no "
                                        "extractor")

    def round_end() -> str:
        report = cx.team_round_end(team)
        return (f"run {report.run}: {len(report.created)} created, {len(report.superseded)} superseded, "
                f"{len(report.confirmed)} confirmed, {len(report.evicted)} evicted"
                f"{', pending: ' + ', '.join(report.pending) if report.pending else ''}")

    return queue.put_call(f"round-end:{team}", round_end, f"round end of team {team}")
