"""A consolidation run as one atomic write and one PROV-O record, and its undo (docs/consolidation.md, "Runs").

A :class:`Plan` says what a run does, by memory id: clusters to merge, supersessions, memories to create,
confirm or evict, and the sessions and pairs it consumed. :func:`apply` reads every memory the plan names as it is
now, computes each one's new state, and writes all of it in one atomic write of the scope: the memories, the
``prov:wasDerivedFrom`` links, and the run's record in the scope's provenance graph, ``{ns}:activity:{scope}:{run}``
(``am:Consolidation``, a ``prov:Activity``): who ran it and when, the plan with every reason (``am:plan``), the
memories it read (``prov:used``), what it distilled and asked about (``am:distilled``, ``am:checked``: the run's
checkpoint, so a crash repeats work and never loses or doubles it), and the exact state of every memory before and
after it (``am:undo``). Consolidation never deletes: merged and contradicted memories are superseded, evicted ones
retired, and :func:`undo` puts every memory back as it was and removes what the run created.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from cortex import lifecycle, provenance
from cortex.consolidation.duplicates import Cluster, merged_state
from cortex.consolidation.report import ConsolidationReport, Merge, ReviewItem, RunInfo, Supersession, UndoReport
from cortex.errors import InvalidInputError, RunNotFoundError, UndoConflictError, VersionConflictError
from cortex.memories import MemoryRepository
from cortex.model import Memory, Scope
from cortex.vocab import date_time, parse_date_time

_RUN = re.compile(r"\d{8}T\d{6}-[0-9a-f]{6}")
PROV = "http://www.w3.org/ns/prov#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
#: Fields an undo does not compare (uses since the run are not a reason to refuse it).
_USE_FIELDS = {"usage_count", "last_used_at", "used_count"}


def scope_label(scope: Scope) -> str:
    """How reports name a scope: ``agent:NAME``, ``team:NAME`` or ``swarm``."""
    return f"agent:{scope.name}" if scope.kind == "agent" else scope.relative


def new_run_id(now: datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}"


def check_run(value: object) -> str:
    """A run id (as ``consolidate`` printed it) or ``last``."""
    if value == "last":
        return "last"
    if not isinstance(value, str) or not _RUN.fullmatch(value):
        raise InvalidInputError("run", f"not a consolidation run id (like 20261124T190501-3fa9c2) nor 'last': "
                                       f"{value!r}")
    return value


@dataclass
class Plan:
    """What one run does to one scope, by memory id (see the module's docstring)."""

    scope: Scope
    actor: str
    kind: str
    started: datetime
    clusters: list[Cluster] = field(default_factory=list)
    #: (old id, new id, reason); the new one may be a memory the run creates
    supersede: list[tuple[str, str, str]] = field(default_factory=list)
    created: list[Memory] = field(default_factory=list)
    #: (memory, the memory it was derived from), besides the merges' and supersessions'
    derived: list[tuple[str, str]] = field(default_factory=list)
    confirm: list[tuple[str, str]] = field(default_factory=list)
    evict: list[tuple[str, str]] = field(default_factory=list)
    distilled: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    #: each memory as the plan read it: applied only while they are all still so (uses aside)
    seen: dict[str, Memory] = field(default_factory=dict)
    #: ids of the memories held for review instead of created (the report's ``held`` says what they are)
    held: list[str] = field(default_factory=list)

    def touched(self) -> list[str]:
        """Ids of existing memories the run changes."""
        ids = [c.survivor.id for c in self.clusters] + [m.id for c in self.clusters for m in c.merged]
        created = {m.id for m in self.created}
        ids += [old for old, new, _ in self.supersede] + [new for _, new, _ in self.supersede if new not in created]
        ids += [i for i, _ in self.confirm] + [i for i, _ in self.evict]
        return list(dict.fromkeys(ids))

    @property
    def empty(self) -> bool:
        return not (self.clusters or self.supersede or self.created or self.confirm or self.evict or self.distilled
                    or self.checked or self.held)


class _Codec:
    """The predicates of a run's record."""

    def __init__(self, repo: MemoryRepository) -> None:
        vocab = repo.store.vocab
        self.vocab = vocab
        self.cls = vocab.predicate("Consolidation")
        self.run, self.kind = vocab.predicate("run"), vocab.predicate("kind")
        self.plan, self.undo = vocab.predicate("plan"), vocab.predicate("undo")
        self.distilled, self.checked = vocab.predicate("distilled"), vocab.predicate("checked")
        self.undone, self.undone_by = vocab.predicate("undoneAt"), vocab.predicate("undoneBy")
        self.started, self.ended = NamedNode(PROV + "startedAtTime"), NamedNode(PROV + "endedAtTime")
        self.associated, self.used = NamedNode(PROV + "wasAssociatedWith"), NamedNode(PROV + "used")

    def node(self, scope: Scope, run: str) -> NamedNode:
        return NamedNode(f"{self.vocab.ns}:activity:{scope.key}:{run}")


def apply(repo: MemoryRepository, plan: Plan, report: ConsolidationReport, now: datetime) -> str:
    """Write ``plan`` in one atomic write (see the module's docstring); returns the run's id. Raises
    :class:`~cortex.errors.VersionConflictError` (nothing written) when a memory it names changed since the plan
    read it (``plan.seen``) or changes while it is written."""
    scope = plan.scope
    run = new_run_id(now)
    made_ids = {m.id for m in plan.created}
    both = [i for i in dict.fromkeys([old for old, _, _ in plan.supersede] + [i for i, _ in plan.confirm]
                                     + [i for i, _ in plan.evict]) if i in made_ids]
    if both:  # a planning error, not a concurrent change: say so rather than "run it again"
        raise InvalidInputError("plan", f"the run creates and confirms, supersedes or evicts the same memory "
                                        f"({', '.join(both[:5])}): nothing was written")
    with repo.lock:
        ids = plan.touched()
        current = {m.id: m for m in repo.load(scope, ids)}
        missing = [i for i in ids if i not in current]
        if missing:
            seen = plan.seen.get(missing[0])
            raise VersionConflictError(missing[0], seen.version if seen else 1, 0)
        # linearizable like any update: a plan made from versions another run (another server) changed since is
        # not applied on top of that run's result (a merge summed twice); the caller plans again
        for memory_id in ids:
            seen = plan.seen.get(memory_id)
            if seen is not None and differs(current[memory_id], seen):
                raise VersionConflictError(memory_id, seen.version, current[memory_id].version)
        after: dict[str, Memory] = {}

        def now_of(memory_id: str) -> Memory:
            return after.get(memory_id) or current[memory_id]

        derived = list(plan.derived)
        for cluster in plan.clusters:
            fresh = Cluster(now_of(cluster.survivor.id), [now_of(m.id) for m in cluster.merged], cluster.rules)
            survivor = after[fresh.survivor.id] = merged_state(fresh)
            for memory in fresh.merged:
                after[memory.id] = memory.model_copy(update={
                    "valid_until": max(now, memory.valid_from or memory.created_at), "superseded_by": survivor.id,
                    "superseded_reason": cluster.reason})
                derived.append((survivor.id, memory.id))
        made = {m.id: m for m in plan.created}
        for old_id, new_id, reason in plan.supersede:
            new = made.get(new_id) or now_of(new_id)
            after[old_id] = lifecycle.superseded(now_of(old_id), new, reason)
            derived.append((new_id, old_id))
        for memory_id, _ in plan.confirm:
            after[memory_id] = lifecycle.validated(now_of(memory_id), now)
        for memory_id, reason in plan.evict:
            after[memory_id] = lifecycle.retired(now_of(memory_id), now, reason)
        derived = list(dict.fromkeys(derived))
        journal = {
            "v": 1, "scope": scope.key,
            "created": [m.model_dump(mode="json") for m in plan.created],
            "changed": [{"before": current[i].model_dump(mode="json"), "after": after[i].model_dump(mode="json")}
                        for i in after],
            "derived": [list(pair) for pair in derived if pair[0] not in made],
            "distilled": plan.distilled, "checked": plan.checked,
        }
        record = _record(repo, plan, report, run, now, journal, list(after))
        replaces = [(current[i], after[i], False) for i in after]
        with provenance.activity(run=run, channel="consolidation"):
            repo.write(scope, plan.created, replaces, derived, action="consolidate", actor=plan.actor, at=now,
                       extra=record)
    return run


def _record(repo: MemoryRepository, plan: Plan, report: ConsolidationReport, run: str, now: datetime,
            journal: dict[str, Any], used: Sequence[str]) -> list[Quad]:
    codec, scope = _Codec(repo), plan.scope
    g, node = repo.store.vocab.prov_graph(scope), codec.node(scope, run)
    summary = report.model_dump(mode="json", exclude={"created", "run", "dry_run"})
    summary["created"] = [{"id": m.id, "content": m.content[:300], "tags": list(m.tags)} for m in plan.created]
    quads = [Quad(node, RDF_TYPE, codec.cls, g), Quad(node, codec.run, Literal(run), g),
             Quad(node, codec.kind, Literal(plan.kind), g), Quad(node, codec.started, date_time(plan.started), g),
             Quad(node, codec.ended, date_time(now), g), Quad(node, codec.associated, repo.store.vocab.agent(plan.actor), g),
             Quad(node, codec.plan, Literal(json.dumps(summary, ensure_ascii=False)), g),
             Quad(node, codec.undo, Literal(json.dumps(journal, ensure_ascii=False)), g)]
    quads += [Quad(node, codec.distilled, Literal(key), g) for key in plan.distilled]
    quads += [Quad(node, codec.checked, Literal(key), g) for key in plan.checked]
    quads += [Quad(node, codec.used, repo.store.vocab.memory(scope, i), g) for i in used]
    return quads


# -- reading records -------------------------------------------------------------------------------------------

def _rows(repo: MemoryRepository, scope: Scope, pattern: str) -> list[Any]:
    codec = _Codec(repo)
    g = repo.store.vocab.prov_graph(scope)
    text = (f"SELECT * WHERE {{ GRAPH {g} {{ ?r {RDF_TYPE} {codec.cls} ; {codec.run} ?run . {pattern} }} }}")
    return list(repo.store.query(text))


def consumed(repo: MemoryRepository, scope: Scope) -> tuple[set[str], set[str]]:
    """What the scope's runs that were not undone distilled and asked about (the checkpoint of the next run)."""
    codec = _Codec(repo)
    distilled: set[str] = set()
    checked: set[str] = set()
    for row in _rows(repo, scope, f"{{ ?r {codec.distilled} ?k BIND(1 AS ?d) }} UNION {{ ?r {codec.checked} ?k }} "
                                  f"FILTER NOT EXISTS {{ ?r {codec.undone} ?u }}"):
        (distilled if row["d"] is not None else checked).add(row["k"].value)
    return distilled, checked


def runs(repo: MemoryRepository, scope: Scope) -> list[RunInfo]:
    """The scope's runs, the latest first."""
    codec = _Codec(repo)
    out = []
    for row in _rows(repo, scope, f"?r {codec.kind} ?kind ; {codec.started} ?s ; {codec.plan} ?plan . "
                                  f"OPTIONAL {{ ?r {codec.associated} ?who }} OPTIONAL {{ ?r {codec.undone} ?u }}"):
        try:
            plan = json.loads(row["plan"].value)
        except ValueError:
            plan = {}
        who = row["who"].value if row["who"] is not None else None
        prefix = f"{repo.store.vocab.ns}:agent:"
        out.append(RunInfo(
            run=row["run"].value, scope=scope_label(scope), kind=row["kind"].value,
            actor=who[len(prefix):] if who and who.startswith(prefix) else who,
            started_at=parse_date_time(row["s"].value),
            undone_at=parse_date_time(row["u"].value) if row["u"] is not None else None,
            merged=sum(len(m.get("merged", [])) for m in plan.get("merges", [])),
            superseded=len(plan.get("superseded", [])), created=len(plan.get("created", [])),
            confirmed=len(plan.get("confirmed", [])), evicted=len(plan.get("evicted", [])),
            sessions=len(plan.get("sessions", [])), **_details(plan)))
    out.sort(key=lambda r: (r.started_at, r.run), reverse=True)
    return out


def _details(plan: dict[str, Any]) -> dict[str, Any]:
    """What a run's recorded plan says it merged, superseded and flagged (a record it cannot read: nothing)."""
    try:
        return {"merges": [Merge.model_validate(m) for m in plan.get("merges", [])],
                "supersessions": [Supersession.model_validate(s) for s in plan.get("superseded", [])],
                "flagged": [ReviewItem.model_validate(i) for i in [*plan.get("review", []), *plan.get("held", [])]],
                "note": plan.get("note") if isinstance(plan.get("note"), str) else None}
    except (ValueError, TypeError, AttributeError):
        return {}


def plans(repo: MemoryRepository, scope: Scope) -> list[tuple[str, dict[str, Any]]]:
    """(run, plan) of the scope's runs that were not undone, the latest first."""
    codec = _Codec(repo)
    found = []
    for row in _rows(repo, scope, f"?r {codec.plan} ?plan ; {codec.started} ?s . "
                                  f"FILTER NOT EXISTS {{ ?r {codec.undone} ?u }}"):
        try:
            found.append((row["s"].value, row["run"].value, json.loads(row["plan"].value)))
        except ValueError:
            continue
    return [(run, plan) for _, run, plan in sorted(found, reverse=True)]


# -- undo ------------------------------------------------------------------------------------------------------

def undo(repo: MemoryRepository, scope: Scope, run: str, actor: str, now: datetime, *, force: bool = False,
         clock: Callable[[], datetime] | None = None) -> UndoReport:
    """Restore the scope as it was before ``run``: every memory it changed back to its state before (version,
    fields, supersession), the memories it created removed, the derivation links it added removed, and its
    sessions free to be distilled again; the run's record stays, marked undone (``am:undoneAt``). One atomic
    write. Raises :class:`UndoConflictError` (nothing changed) when a memory was changed since by something
    else (uses aside) unless ``force``, or when the run was undone already."""
    codec = _Codec(repo)
    g = repo.store.vocab.prov_graph(scope)
    node = codec.node(scope, run)
    with repo.lock:
        rows = list(repo.store.query(f"SELECT ?j ?u WHERE {{ GRAPH {g} {{ {node} {codec.undo} ?j . "
                                     f"OPTIONAL {{ {node} {codec.undone} ?u }} }} }}"))
        if not rows:
            raise RunNotFoundError(run, f" in {scope_label(scope)}")
        if rows[0]["u"] is not None:
            raise UndoConflictError(f"run {run} was undone already ({rows[0]['u'].value})")
        journal = json.loads(rows[0]["j"].value)
        created = [Memory.model_validate(m) for m in journal["created"]]
        changed = [(Memory.model_validate(c["before"]), Memory.model_validate(c["after"])) for c in journal["changed"]]
        current = {m.id: m for m in repo.load(scope, [m.id for m in created] + [a.id for _, a in changed])}
        conflicts = []
        for memory in created:
            found = current.get(memory.id)
            if found is not None and differs(found, memory):
                conflicts.append(f"{memory.id} (created by the run, changed since)")
        for before, after in changed:
            found = current.get(after.id)
            if found is None:
                conflicts.append(f"{after.id} (gone since the run)")
            elif differs(found, after):
                conflicts.append(f"{after.id} (changed since the run)")
        if conflicts and not force:
            raise UndoConflictError(f"undoing run {run} would overwrite what happened since: "
                                    f"{'; '.join(conflicts[:10])}; nothing was changed (force overwrites it)")
        replaces = [(current[b.id], with_later_uses(b, a, current[b.id]), False) for b, a in changed
                    if b.id in current]
        deletes = [m.id for m in created if m.id in current]
        unlink = [tuple(pair) for pair in journal.get("derived", [])]
        extra = [Quad(node, codec.undone, date_time(now), g), Quad(node, codec.undone_by, repo.store.vocab.agent(actor), g)]
        with provenance.activity(run=run, channel="consolidation"):
            repo.write(scope, [], replaces, action="undo", actor=actor, at=now, deletes=deletes,
                       unlink=unlink, extra=extra)
    return UndoReport(run=run, scope=scope_label(scope), restored=[b.id for b, _ in changed if b.id in current],
                      removed=deletes, unlinked=len(unlink))


def with_later_uses(before: Memory, after: Memory, now: Memory) -> Memory:
    """``before`` (a memory's state before a run that changed it to ``after``), plus the uses the memory had since the run (``now`` against ``after``): an undo restores what
    the run changed, not what agents did since."""
    shown = max(0, now.usage_count - after.usage_count)
    used = max(0, now.used_count - after.used_count)
    if not shown and not used:
        return before
    return before.model_copy(update={"usage_count": before.usage_count + shown, "used_count": before.used_count + used,
                                     "last_used_at": max(before.last_used_at, now.last_used_at)})


def differs(found: Memory, expected: Memory) -> bool:
    """Whether ``found`` is not ``expected`` (uses aside): a memory changed since a run left it so."""
    return found.model_dump(exclude=_USE_FIELDS | {"scope", "agent"}) != \
        expected.model_dump(exclude=_USE_FIELDS | {"scope", "agent"})


__all__ = ["Plan", "apply", "check_run", "consumed", "differs", "new_run_id", "plans", "runs", "undo",
           "with_later_uses"]
