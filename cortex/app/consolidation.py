"""The consolidation domain of the facade: runs that merge, supersede and distil, undone exactly."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cortex import caller, config
from cortex.app.admin import AdminOps
from cortex.app.kernel import _UNSET, announced
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.errors import InvalidInputError, PermissionDeniedError, VersionConflictError
from cortex.model import (
    Memory,
    Scope,
    Source,
)
from cortex.validation import (
    check_team_name,
    memory_from_entry,
)

if TYPE_CHECKING:
    from cortex.consolidation import ConsolidationReport, ConsolidationSettings, ReviewItem, RunInfo, UndoReport
    from cortex.model import TeamRound


#: Plans made of one run when another run changed its memories meanwhile (each retry reads what is stored).
PLAN_ATTEMPTS = 3

class ConsolidationOps(MemoryOps, ReadingOps, AdminOps):
    """Consolidation runs, their undo, the review of contradictions, a team's round end."""

    @property
    def consolidation(self) -> "ConsolidationSettings":
        """The rules of consolidation runs and of the sweep (``CORTEX_CONSOLIDATE_*`` or the ``[consolidation]``
        table of ``.cortex/config.toml``; docs/consolidation.md). Assignable."""
        if self._consolidation is _UNSET:
            from cortex.consolidation.settings import consolidation_settings

            self._consolidation = consolidation_settings(project_root=self.project_root)
        return self._consolidation  # type: ignore[return-value]

    @consolidation.setter
    def consolidation(self, settings: "ConsolidationSettings") -> None:
        self._consolidation = settings

    def _consolidation_target(self, agent: str | None, team: str | None, swarm: bool) -> tuple[Scope, str]:
        """The scope one run covers and the agent it acts for: an agent's own memory (itself), a team's (its
        lead) or the swarm's (a lead)."""
        given = [name for name, value in (("agent", agent), ("team", team), ("swarm", swarm or None))
                 if value is not None]
        if len(given) != 1:
            raise InvalidInputError("agent", "name exactly one of an agent, team= or swarm=True "
                                             f"({'none' if not given else ' and '.join(given)} given)")
        if agent is not None:
            self._agent(agent)
            return Scope.agent(agent), agent
        if team is not None:
            name = check_team_name(team)
            self._lead_calling(f"team {name!r}", name)
            if name not in self._teams():
                raise InvalidInputError("team", f"unknown team {name!r}: no agent declares it in cortex: teams")
            return Scope.team(name), self._lead_of(name)
        self._lead_calling("the swarm", None)
        leads = sorted(d.name for d in self.agents.list() if d.memory_enabled and d.settings.lead)
        if not leads:
            raise InvalidInputError("swarm", "the swarm's memory is consolidated for a lead, and no agent is one "
                                             "(cortex: {lead: true})")
        return Scope.swarm(), leads[0]

    @contextmanager
    def _reviewing(self, agent: str | None) -> Iterator[None]:
        """Run a review of ``agent``'s own memory for a caller acting for another agent when that caller leads one
        of ``agent``'s teams (it decides what was held in its members' memory: docs/consolidation.md, "Held for
        review"); any other caller is refused as :meth:`_agent` refuses it."""
        me = caller.current()
        if agent is None or me is None or caller.may(agent):
            yield
            return
        mine = self.agents.get(me)
        theirs = self.agents.get(agent)
        if mine is None or not mine.settings.lead or theirs is None or \
                not set(mine.settings.teams) & set(theirs.settings.teams):
            caller.require(agent)
        with caller.acting(agent):
            yield

    def _lead_calling(self, what: str, team: str | None) -> None:
        """Refuse a caller acting for an agent (:mod:`cortex.caller`) that is not a lead of ``team`` (None: of
        any team, for the swarm): a shared scope is consolidated for an admin or one of its leads only."""
        who = caller.current()
        if who is None:
            return
        me = self._member(who)
        if not me.lead or (team is not None and team not in me.teams):
            raise PermissionDeniedError(f"the memory of {what} is consolidated by an admin token or the token of a "
                                        f"lead of {what}", "team" if team is not None else "swarm")

    def _lead_of(self, team: str) -> str:
        leads = sorted(d.name for d in self.agents.list() if d.memory_enabled and d.settings.lead
                       and team in d.settings.teams)
        if not leads:
            raise InvalidInputError("team", f"team {team!r} has no lead: its memory is consolidated for its lead "
                                            f"(cortex: {{teams: [{team}], lead: true}})")
        return leads[0]

    def _consolidation_context(self, actor: str, scope: Scope, now: datetime) -> "Any":
        from cortex.consolidation.engine import Context

        policy = self._policy(actor)

        def make(entry: Mapping[str, Any]) -> Memory:
            memory = memory_from_entry(actor, dict(entry), now, policy.expires_at, author=actor,
                                       scope=scope.relative)
            return memory.model_copy(update={"agent": scope.name}) if scope.kind == "agent" else memory

        return Context(self._memories, self.consolidation, self.llm, self._state, now, make,
                       lambda text: self.redactor.redact(text).text)

    def _run_plan(self, plan_run: Callable[["ConsolidationReport", datetime], Any],
                  new_report: Callable[[datetime], "ConsolidationReport"]) -> "ConsolidationReport":
        """Plan a run (``plan_run(report, now)``: a :class:`cortex.consolidation.runs.Plan`) and, unless the report
        is a dry run's or there is nothing to do, write it: ``report.run`` is then its id. A plan whose memories
        another run changed meanwhile (another server consolidating the scope) is made again, now, from what is
        stored: it then finds nothing left to do, or only what is left."""
        from cortex.consolidation import runs

        for attempt in range(PLAN_ATTEMPTS):
            now = self._clock()
            report = new_report(now)
            # runs of one scope are serialised (the second plans from what the first wrote); the model is asked
            # holding no lock other work needs, and the store's write lock is taken only to write (runs.apply)
            with self._capturing:
                lock = self._consolidating.setdefault(report.scope, threading.Lock())
            with lock:
                plan = plan_run(report, now)
                if report.dry_run or plan.empty:
                    return report
                self._memories.embed_ahead([m.content for m in plan.created])  # the slow part, before the lock
                def apply(plan: Any = plan, report: "ConsolidationReport" = report) -> str:
                    return runs.apply(self._memories, plan, report, self._clock())

                try:
                    report.run = self._changing(apply)
                except VersionConflictError:
                    if attempt + 1 == PLAN_ATTEMPTS:
                        raise
                    continue
            return report
        raise AssertionError("unreachable")

    def _consolidation_scopes(self, agent: str | None, team: str | None, swarm: bool) -> list[Scope]:
        """The scope named (as :meth:`_consolidation_target` checks it), or every stored scope when none is."""
        if agent is None and team is None and not swarm:
            who = caller.current()  # an agent's token: its own memory, never every scope
            return self._memories.scopes() if who is None else [self._consolidation_target(who, None, False)[0]]
        return [self._consolidation_target(agent, team, swarm)[0]]

    @announced("consolidation", "consolidate")
    def consolidate(self, agent: str | None = None, *, team: str | None = None, swarm: bool = False,
                    dry_run: bool = False) -> "ConsolidationReport":
        """Consolidate one scope (an agent's own memory, ``team=``'s or the swarm's) in one run: near duplicates
        merged (the survivor supersedes them, keeps their summed usage and tags, ``prov:wasDerivedFrom`` each),
        contradictions the language model finds superseded (when configured) or listed for review, and, for an
        agent, its recent sessions and task outcomes distilled into learnings (a learning that recurs raises the
        confidence of the memory it repeats). Never deletes; one atomic write and one PROV-O activity, whose id
        (``report.run``) :meth:`undo_consolidation` takes. ``dry_run``: plan only, and say exactly what a run
        would do. Bad model output changes nothing (``problems``); an unreachable model leaves its part
        ``pending`` for the next run."""
        from cortex.consolidation import engine, runs
        from cortex.model import ConsolidationReport

        scope, actor = self._consolidation_target(agent, team, swarm)
        return self._run_plan(lambda report, now: engine.plan_scope(self._consolidation_context(actor, scope, now),
                                                                    scope, actor, report, agent=agent),
                              lambda now: ConsolidationReport(scope=runs.scope_label(scope), actor=actor,
                                                              dry_run=dry_run, started_at=now))

    @announced("consolidation", "round_end")
    def team_round_end(self, team: str, *, dry_run: bool = False) -> "ConsolidationReport":
        """The end of a round of ``team``: its lead's extractor distils the round's task outcomes and the members'
        new learnings into the team memory (entries tagged ``team-memory`` and ``decision``, ``lesson``,
        ``member`` or ``context``): new entries, updates by supersession, repeats confirmed, the least valuable
        entries evicted over the bound (default 200). Needs a language model. One run, undone like any other.
        A temporary team (declared with a parent) has no extractor."""
        from cortex.consolidation import engine, runs
        from cortex.model import ConsolidationReport

        name = check_team_name(team)
        parents = {t: p for d in self.agents.list() if d.memory_enabled for t, p in d.settings.parents.items()}
        if name in parents:
            raise InvalidInputError("team", f"team {name!r} is temporary (its parent is {parents[name]!r}): it reads "
                                            f"its parent's memory and has no extractor")
        scope, lead = self._consolidation_target(None, name, False)
        members = sorted(d.name for d in self.agents.list() if d.memory_enabled and name in d.settings.teams)

        def plan_round(report: ConsolidationReport, now: datetime) -> Any:
            return engine.plan_round(self._consolidation_context(lead, scope, now), scope, lead, members, report,
                                     lambda member, since: self._round_learnings(member, since, now))

        return self._run_plan(plan_round, lambda now: ConsolidationReport(scope=runs.scope_label(scope), actor=lead,
                                                                          dry_run=dry_run, started_at=now))

    def _round_learnings(self, member: str, since: datetime | None, now: datetime) -> list[Memory]:
        """What ``member`` learned in a round begun at ``since``: its own current memories created since then, of
        the sources a round end reads (task outcomes, learnings at agent end, manual and injected ones)."""
        from cortex.consolidation import engine

        own = engine.current(self._memories, Scope.agent(member), now)
        return [m for m in own if (since is None or m.created_at > since)
                and m.source in (Source.TASK_COMPLETION, Source.AGENT_END, Source.MANUAL, Source.INJECTED)]

    def team_round(self, team: str) -> "TeamRound":
        """``team``'s current round (docs/consolidation.md, "Team memory"): since when (its last round end not
        undone, else ``max_age`` back), that run, and what each member stored since, newest first: what the next
        round end will distil. An agent acting for itself (its token) must be of the team: a lead of it sees
        every member, another member only itself."""
        from cortex.consolidation import engine
        from cortex.model import MemberRound, TeamRound

        name = check_team_name(team)
        if name not in self._teams():
            raise InvalidInputError("team", f"unknown team {name!r}: no agent declares it in cortex: teams")
        declared = [d for d in self.agents.list() if d.memory_enabled and name in d.settings.teams]
        who = caller.current()
        if who is not None:
            me = self._member(who)
            if name not in me.teams:
                raise PermissionDeniedError(f"the round of team {name!r} is shown to its members and an admin "
                                            f"token", "team")
            if not me.lead:
                declared = [d for d in declared if d.name == who]
        now = self._clock()
        last, since = engine.round_start(self._memories, Scope.team(name), now, self.consolidation)
        members = [MemberRound(agent=d.name, lead=d.settings.lead, memories=sorted(
            self._round_learnings(d.name, since, now), key=lambda m: m.created_at, reverse=True))
            for d in sorted(declared, key=lambda d: d.name)]
        leads = sorted(d.name for d in self.agents.list() if d.memory_enabled and d.settings.lead
                       and name in d.settings.teams)
        return TeamRound(team=name, leads=leads, since=since, last_round_end=last, members=members)

    @announced("consolidation", "undo")
    def undo_consolidation(self, run: str = "last", *, agent: str | None = None, team: str | None = None,
                           swarm: bool = False, force: bool = False) -> "UndoReport":
        """Undo a consolidation run (its id, or ``last``: the latest run not undone, of the scope named, or of
        any scope): every memory it changed back as it was before, the memories it created removed, its
        derivation links removed; its record stays in provenance, marked undone. Refuses (nothing changed) when
        a memory was changed since by something else, unless ``force``."""
        from cortex.consolidation import runs

        wanted = runs.check_run(run)
        found = [(info, scope) for scope in self._consolidation_scopes(agent, team, swarm)
                 for info in runs.runs(self._memories, scope)
                 if (wanted == "last" and info.undone_at is None) or info.run == wanted]
        if not found:
            from cortex.errors import RunNotFoundError

            raise RunNotFoundError(wanted, "" if wanted != "last" else " left to undo")
        info, scope = max(found, key=lambda pair: (pair[0].started_at, pair[0].run))
        actor = info.actor or (scope.name if scope.kind == "agent" else "cortex")
        return runs.undo(self._memories, scope, info.run, actor, self._clock(), force=force)

    def consolidation_runs(self, agent: str | None = None, *, team: str | None = None,
                           swarm: bool = False) -> list["RunInfo"]:
        """The consolidation runs of one scope (or of every scope, naming none), the latest first, undone ones
        too."""
        from cortex.consolidation import runs

        found = [info for scope in self._consolidation_scopes(agent, team, swarm)
                 for info in runs.runs(self._memories, scope)]
        return sorted(found, key=lambda r: (r.started_at, r.run), reverse=True)

    def review(self, agent: str | None = None, *, team: str | None = None,
               swarm: bool = False) -> list["ReviewItem"]:
        """The review queue of one scope: the contradictions consolidation found and did not apply
        (``apply_contradictions`` off), still open (both memories current), and the memories held for review
        (kind ``held``: what an automatic channel would have written where it reaches other agents, with its
        origin and why it was held), not yet decided. Decide one with :meth:`resolve_review`."""
        with self._reviewing(agent):
            return self._review(agent, team, swarm)

    def _review(self, agent: str | None, team: str | None, swarm: bool) -> list["ReviewItem"]:
        from cortex.consolidation import runs
        from cortex.model import ReviewItem

        scope, _ = self._consolidation_target(agent, team, swarm)
        now = self._clock()
        items: list[ReviewItem] = []
        plans = runs.plans(self._memories, scope)
        seen: set[frozenset[str]] = {frozenset((str(d.get("keep")), str(d.get("supersede")))) for _, plan in plans
                                     for d in plan.get("dismissed", []) if isinstance(d, dict)}
        for run, plan in plans:
            for raw in plan.get("review", []):
                try:
                    item = ReviewItem.model_validate({**raw, "run": run})
                except ValueError:
                    continue
                pair = frozenset((item.keep, item.supersede))
                if pair in seen:
                    continue
                seen.add(pair)
                found = {m.id: m for m in self._memories.load(scope, [item.keep, item.supersede])}
                if len(found) == 2 and all(m.superseded_by is None and not m.expired(now)
                                           and (m.valid_until is None or m.valid_until > now) for m in found.values()):
                    items.append(item)
        return items + self._held(scope, plans)

    @announced("review", "held", own=True)
    def hold_memory(self, agent: str, entry: Mapping[str, Any], *, reason: str, actor: str,
                    origin: Mapping[str, Any]) -> "ReviewItem":
        """Hold for review the memory an automatic channel (a capture by ``actor``) would write for ``agent``
        (``entry``: its fields, as for ``store``; redacted here): not written, listed by :meth:`review` (kind
        ``held``, with ``origin`` and ``reason``) until a lead or an admin approves or rejects it; recorded as a run
        of kind ``held`` in ``agent``'s provenance."""
        from cortex.consolidation import runs
        from cortex.model import ConsolidationReport

        scope, item = self._held_item(agent, entry, reason=reason, actor=actor, origin=origin)
        now = self._clock()
        report = ConsolidationReport(scope=item.scope, actor=actor, started_at=now, held=[item])
        plan = runs.Plan(scope, actor, "held", now)
        plan.held = [item.keep]
        return item.model_copy(update={"run": self._run_plan(lambda _report, _now: plan, lambda _now: report).run})

    def _held_item(self, agent: str, entry: Mapping[str, Any], *, reason: str, actor: str,
                   origin: Mapping[str, Any]) -> tuple[Scope, "ReviewItem"]:
        """The scope and the review item of the memory ``entry`` would be for ``agent`` (its text redacted,
        checked as a store would check it), held by ``actor`` for ``reason``: what :meth:`hold_memory` records and
        a dry run (:class:`cortex.capture.dryrun.DryRun`) reports."""
        from cortex.consolidation import runs
        from cortex.model import ReviewItem

        entry = {**entry, "content": self.redactor.redact(str(entry.get("content", ""))).text}
        if isinstance(entry.get("metadata"), Mapping) and isinstance(entry["metadata"].get("task"), str):
            entry["metadata"] = {**entry["metadata"], "task": self.redactor.redact(entry["metadata"]["task"]).text}
        entry.setdefault("project", self._agent(agent).settings.project or config.DEFAULT_PROJECT)
        scope, [memory] = self._new_memories(agent, [entry], batch=False)
        return scope, ReviewItem(run=None, scope=runs.scope_label(scope), keep=memory.id, reason=reason,
                                 keep_content=memory.content, kind="held", agent=actor, origin=dict(origin),
                                 entry=memory.model_dump(mode="json"))

    def _held(self, scope: Scope, plans: list[tuple[str, dict[str, Any]]]) -> list["ReviewItem"]:
        """The memories held for review in ``scope`` by runs not undone, not yet approved or rejected (a decision
        is a run's ``approved:ID`` or ``rejected:ID`` checkpoint: undoing it puts the item back)."""
        from cortex.consolidation import runs
        from cortex.model import ReviewItem

        _, checked = runs.consumed(self._memories, scope)
        decided = {key.split(":", 1)[1] for key in checked if key.startswith(("approved:", "rejected:"))}
        items: list[ReviewItem] = []
        for run, plan in plans:
            for raw in plan.get("held", []):
                try:
                    item = ReviewItem.model_validate({**raw, "run": run, "kind": "held"})
                except ValueError:
                    continue
                if item.keep not in decided and item.entry is not None:
                    decided.add(item.keep)
                    items.append(item)
        return items

    @announced("review", "resolved")
    def resolve_review(self, keep: str, supersede: str = "", *, accept: bool = True, agent: str | None = None,
                       team: str | None = None, swarm: bool = False) -> "ConsolidationReport":
        """Decide an item of the review queue (:meth:`review`). A contradiction (``keep`` and ``supersede``):
        ``accept`` supersedes ``supersede`` by ``keep``; ``accept=False`` keeps both and takes the pair off the
        list. A held memory (``keep`` its id, ``supersede`` empty): ``accept`` approves it (written as the item
        shows it, superseding the entry it updates when that is still current), ``accept=False`` rejects it (it
        stays in the record of the run that held it, and is never written). Each is a run of its own (kind
        ``review``), undone like any other: who decided and when is in provenance."""
        with self._reviewing(agent):
            return self._resolve(keep, supersede, accept, agent, team, swarm)

    def _resolve(self, keep: str, supersede: str, accept: bool, agent: str | None, team: str | None,
                 swarm: bool) -> "ConsolidationReport":
        from cortex.consolidation import runs
        from cortex.model import ConsolidationReport, Supersession

        scope, actor = self._consolidation_target(agent, team, swarm)
        if not supersede:
            return self._resolve_held(scope, actor, keep, accept, self.review(agent, team=team, swarm=swarm))
        item = next((i for i in self.review(agent, team=team, swarm=swarm)
                     if i.kind == "contradiction" and (i.keep, i.supersede) == (keep, supersede)), None)
        if item is None:
            raise InvalidInputError("supersede", f"no open contradiction keeping {keep!r} over {supersede!r} in "
                                                 f"{runs.scope_label(scope)}: `cortex review` lists them")
        now = self._clock()
        report = ConsolidationReport(scope=runs.scope_label(scope), actor=actor, started_at=now, examined=2)
        plan = runs.Plan(scope, actor, "review", now)
        if accept:
            reason = f"accepted from review: {item.reason}"
            plan.supersede = [(supersede, keep, reason)]
            report.superseded = [Supersession(old=supersede, new=keep, reason=reason)]
        else:
            plan.checked = [f"dismissed:{keep} {supersede}"]
            report.dismissed = [item]
        return self._run_plan(lambda _report, _now: plan, lambda _now: report)

    def _resolve_held(self, scope: Scope, actor: str, held: str, accept: bool,
                      queue: list["ReviewItem"]) -> "ConsolidationReport":
        """Approve (write) or reject a held memory of ``queue``, in a run of its own."""
        from cortex.consolidation import runs
        from cortex.model import ConsolidationReport, Supersession

        item = next((i for i in queue if i.kind == "held" and i.keep == held), None)
        if item is None or item.entry is None:
            raise InvalidInputError("keep", f"no memory held for review with id {held!r} in "
                                            f"{runs.scope_label(scope)}: `cortex review` lists them (a contradiction "
                                            f"names both memories: keep and supersede)")
        now = self._clock()
        report = ConsolidationReport(scope=runs.scope_label(scope), actor=actor, started_at=now, examined=1)
        plan = runs.Plan(scope, actor, "review", now)
        if not accept:
            plan.checked = [f"rejected:{held}"]
            report.dismissed = [item]
            return self._run_plan(lambda _report, _now: plan, lambda _now: report)
        memory = Memory.model_validate({**item.entry, "updated_at": now, "validated_at": now})
        plan.created = report.created = [memory]
        plan.checked = [f"approved:{held}"]
        replaces = item.origin.get("replaces")
        if isinstance(replaces, str) and any(m.superseded_by is None and (m.valid_until is None or m.valid_until > now)
                                             for m in self._memories.load(scope, [replaces])):
            reason = f"approved from review: {item.reason}"
            plan.supersede = [(replaces, memory.id, reason)]
            report.superseded = [Supersession(old=replaces, new=memory.id, reason=reason)]
        return self._run_plan(lambda _report, _now: plan, lambda _now: report)

    def review_all(self) -> list["ReviewItem"]:
        """Every item the caller may review (:meth:`review`), of every queue at once, each queue's in its order.
        An admin (no caller): every declared agent's own memory, every team's with a lead, the swarm's when there
        is a lead. An agent's token: its own agent's queue (of which it decides the contradictions; what was held
        there, only when it leads one of its teams); for a lead besides the queues of the teams it leads and the
        swarm's, and the memories held in its teams' members' memory (which it decides; their contradictions are
        theirs, not listed)."""
        declared = sorted((d for d in self.agents.list() if d.memory_enabled), key=lambda d: d.name)
        leads = [d for d in declared if d.settings.lead]
        who = caller.current()
        me = self._member(who) if who is not None else None
        # (agent, team, swarm, held only)
        queues: list[tuple[str | None, str | None, bool, bool]] = []
        if me is None:
            queues += [(d.name, None, False, False) for d in declared]
            teams = sorted({t for d in leads for t in d.settings.teams})
        else:
            queues.append((me.agent, None, False, False))
            teams = sorted(me.teams) if me.lead else []
            if me.lead:
                queues += [(d.name, None, False, True) for d in declared
                           if d.name != me.agent and set(d.settings.teams) & set(me.teams)]
        queues += [(None, t, False, False) for t in teams]
        if leads and (me is None or me.lead):
            queues.append((None, None, True, False))
        return [item for agent, team, swarm, held_only in queues
                for item in self.review(agent, team=team, swarm=swarm) if not held_only or item.kind == "held"]
