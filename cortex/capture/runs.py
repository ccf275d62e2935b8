"""A transcript capture as one run that can be undone (docs/capture.md, "Seeing and undoing a capture").

While a capture writes, the repository notes every memory it creates, changes (confirmed, superseded, touched,
marked used) and deletes (its prune at agent end) in a :class:`~cortex.memories.WriteJournal`. :func:`save`
writes that journal as the run's record in the capturing agent's provenance graph,
``{ns}:activity:{scope}:capture-{run}`` (``am:CaptureRun``): the run id, who captured, when, the session and
transcript file, the checkpoint the capture started from, and the exact state of every memory before and after
it (``am:undo``). :func:`undo` puts every changed or deleted memory back as it was (uses made since kept), removes
what the run created, moves the transcript's checkpoint back so that a capture can read that part again, and marks
the record undone (``am:undoneAt``). It reuses consolidation's run ids and comparisons
(:mod:`cortex.consolidation.runs`): a memory changed since the run refuses the undo unless forced.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from cortex.capture.checkpoints import Checkpoints
from cortex.consolidation import runs as consolidation_runs
from cortex.consolidation.runs import PROV, RDF_TYPE, differs, new_run_id, with_later_uses
from cortex.errors import InvalidInputError, RunNotFoundError, UndoConflictError
from cortex.memories import MemoryRepository, WriteJournal
from cortex.model import CaptureRunInfo, Memory, Scope, UndoReport
from cortex.vocab import date_time, parse_date_time

#: Where a report of an unknown run sends the user.
_HINT = "`cortex capture AGENT --runs` lists them"


def check_run(value: object) -> str:
    """A capture run id (as the capture's report gave it) or ``last``."""
    try:
        return consolidation_runs.check_run(value)
    except InvalidInputError:
        shown = repr(value)[:80]
        raise InvalidInputError("run", f"not a capture run id (like 20261124T190501-3fa9c2, the report's run) "
                                       f"nor 'last': {shown}") from None


class _Codec:
    """The predicates of a capture run's record."""

    def __init__(self, repo: MemoryRepository) -> None:
        vocab = self.vocab = repo.store.vocab
        self.cls = vocab.predicate("CaptureRun")
        self.run, self.undo = vocab.predicate("run"), vocab.predicate("undo")
        self.session, self.file = vocab.predicate("session"), vocab.predicate("file")
        self.undone, self.undone_by = vocab.predicate("undoneAt"), vocab.predicate("undoneBy")
        self.started, self.ended = NamedNode(PROV + "startedAtTime"), NamedNode(PROV + "endedAtTime")
        self.associated = NamedNode(PROV + "wasAssociatedWith")

    def node(self, scope: Scope, run: str) -> NamedNode:
        return NamedNode(f"{self.vocab.ns}:activity:{scope.key}:capture-{run}")


def _scope_json(scope: Scope) -> list[str | None]:
    return [scope.kind, scope.name]


def _scope_of(value: Any) -> Scope:
    kind, name = value
    return Scope.swarm() if kind == "swarm" else Scope.team(name) if kind == "team" else Scope.agent(name)


def superseded(journal: WriteJournal) -> list[str]:
    """Ids of the existing memories the journal's writes superseded."""
    return [after.id for before, after in journal.changed.values()
            if before.superseded_by is None and after.superseded_by is not None]


def save(repo: MemoryRepository, scope: Scope, agent: str, journal: WriteJournal, *, transcript: str,
         checkpoint: dict[str, int], session: str | None, started: datetime, now: datetime) -> str | None:
    """Write the record of a capture by ``agent`` whose writes ``journal`` noted, in ``scope``'s provenance graph
    (one write); returns the run's id, or None when the capture wrote nothing (nothing to undo)."""
    if journal.empty:
        return None
    run = new_run_id(now)
    codec = _Codec(repo)
    g, node = repo.store.vocab.prov_graph(scope), codec.node(scope, run)
    record = {
        "v": 1, "agent": agent, "transcript": transcript,
        "checkpoint": {k: int(checkpoint.get(k, 0)) for k in ("markers", "llm")},
        "created": [{"scope": _scope_json(s), "memory": m.model_dump(mode="json")}
                    for (s, _), m in journal.created.items()],
        "changed": [{"scope": _scope_json(s), "before": b.model_dump(mode="json"), "after": a.model_dump(mode="json")}
                    for (s, _), (b, a) in journal.changed.items()],
        "deleted": [{"scope": _scope_json(s), "memory": m.model_dump(mode="json")}
                    for (s, _), m in journal.deleted.items()],
    }
    quads = [Quad(node, RDF_TYPE, codec.cls, g), Quad(node, codec.run, Literal(run), g),
             Quad(node, codec.started, date_time(started), g), Quad(node, codec.ended, date_time(now), g),
             Quad(node, codec.associated, repo.store.vocab.agent(agent), g),
             Quad(node, codec.file, Literal(transcript.rsplit("/", 1)[-1][:128]), g),
             Quad(node, codec.undo, Literal(json.dumps(record, ensure_ascii=False)), g)]
    if session:
        quads.append(Quad(node, codec.session, Literal(session[:128]), g))
    repo.write(scope, [], [], extra=quads)
    return run


def listed(repo: MemoryRepository, scope: Scope) -> list[CaptureRunInfo]:
    """The capture runs recorded in ``scope``, the latest first (undone ones too)."""
    codec = _Codec(repo)
    g = repo.store.vocab.prov_graph(scope)
    rows = repo.store.query(f"SELECT ?run ?s ?j ?who ?session ?file ?u WHERE {{ GRAPH {g} {{ ?r {RDF_TYPE} {codec.cls} ; "
                            f"{codec.run} ?run ; {codec.started} ?s ; {codec.undo} ?j ; {codec.associated} ?who "
                            f"OPTIONAL {{ ?r {codec.session} ?session }} OPTIONAL {{ ?r {codec.file} ?file }} "
                            f"OPTIONAL {{ ?r {codec.undone} ?u }} }} }}")
    prefix = f"{repo.store.vocab.ns}:agent:"
    out = []
    for row in rows:
        try:
            record = json.loads(row["j"].value)
        except ValueError:
            record = {}
        who = row["who"].value
        out.append(CaptureRunInfo(
            run=row["run"].value, agent=who[len(prefix):] if who.startswith(prefix) else who,
            started_at=parse_date_time(row["s"].value),
            session=row["session"].value if row["session"] is not None else None,
            file=row["file"].value if row["file"] is not None else None,
            created=len(record.get("created", [])), changed=len(record.get("changed", [])),
            pruned=len(record.get("deleted", [])),
            undone_at=parse_date_time(row["u"].value) if row["u"] is not None else None))
    return sorted(out, key=lambda r: (r.started_at, r.run), reverse=True)


def latest(repo: MemoryRepository, scope: Scope) -> str | None:
    """The latest capture run of ``scope`` that was not undone, or None."""
    codec = _Codec(repo)
    g = repo.store.vocab.prov_graph(scope)
    rows = repo.store.query(f"SELECT ?run ?s WHERE {{ GRAPH {g} {{ ?r {RDF_TYPE} {codec.cls} ; {codec.run} ?run ; "
                            f"{codec.started} ?s FILTER NOT EXISTS {{ ?r {codec.undone} ?u }} }} }}")
    found = sorted(((parse_date_time(r["s"].value), r["run"].value) for r in rows), reverse=True)
    return found[0][1] if found else None


def undo(repo: MemoryRepository, scope: Scope, run: str, actor: str, now: datetime, checkpoints: Checkpoints, *,
         force: bool = False) -> UndoReport:
    """Undo capture ``run`` of ``scope`` (``last``: its latest not undone): see the module's docstring. Raises
    :class:`RunNotFoundError`, or :class:`UndoConflictError` (nothing changed) when the run was undone already or
    a memory it wrote was changed since (uses aside) and not ``force``."""
    codec = _Codec(repo)
    g = repo.store.vocab.prov_graph(scope)
    with repo.lock:
        if run == "last":
            found = latest(repo, scope)
            if found is None:
                raise RunNotFoundError("last", f" of {scope.label} left to undo", kind="capture", hint=_HINT)
            run = found
        node = codec.node(scope, run)
        rows = list(repo.store.query(f"SELECT ?j ?u WHERE {{ GRAPH {g} {{ {node} {codec.undo} ?j . "
                                     f"OPTIONAL {{ {node} {codec.undone} ?u }} }} }}"))
        if not rows:
            raise RunNotFoundError(run, f" of {scope.label}", kind="capture", hint=_HINT)
        if rows[0]["u"] is not None:
            raise UndoConflictError(f"capture run {run} was undone already ({rows[0]['u'].value})")
        record = json.loads(rows[0]["j"].value)
        plan = _Plan(repo, record)
        conflicts = plan.conflicts()
        if conflicts and not force:
            raise UndoConflictError(f"undoing capture run {run} would overwrite what happened since: "
                                    f"{'; '.join(conflicts[:10])}; nothing was changed (force overwrites it)")
        extra = [Quad(node, codec.undone, date_time(now), g),
                 Quad(node, codec.undone_by, repo.store.vocab.agent(actor), g)]
        for target in sorted(plan.scopes - {scope}, key=lambda s: s.key) + [scope]:
            adds, replaces, deletes = plan.writes(target)
            repo.write(target, adds, replaces, action="undo", actor=actor, at=now, deletes=deletes,
                       extra=extra if target == scope else ())
        offsets = checkpoints.get(record["agent"], record["transcript"])
        back = {k: min(int(record["checkpoint"].get(k, 0)), offsets[k]) for k in ("markers", "llm")}
        checkpoints.set(record["agent"], record["transcript"], markers=back["markers"], llm=back["llm"])
    return UndoReport(run=run, scope=scope.label, restored=plan.restored, removed=plan.removed)


class _Plan:
    """What undoing a recorded run does, scope by scope, against the memories as they are now."""

    def __init__(self, repo: MemoryRepository, record: dict[str, Any]) -> None:
        def entries(name: str, *fields: str) -> list[tuple[Any, ...]]:
            return [(_scope_of(e["scope"]), *(Memory.model_validate(e[f]) for f in fields)) for e in record[name]]

        self.created = entries("created", "memory")
        self.changed = entries("changed", "before", "after")
        self.deleted = entries("deleted", "memory")
        self.scopes = {e[0] for e in (*self.created, *self.changed, *self.deleted)}
        self.now: dict[tuple[Scope, str], Memory] = {}
        for target in self.scopes:
            ids = [e[1].id for e in (*self.created, *self.changed, *self.deleted) if e[0] == target]
            self.now.update({(target, m.id): m for m in repo.load(target, ids)})
        self.restored: list[str] = []
        self.removed: list[str] = []

    def conflicts(self) -> list[str]:
        """Why undoing would overwrite what happened since the run (empty: nothing did)."""
        found = []
        for target, memory in self.created:
            current = self.now.get((target, memory.id))
            if current is not None and differs(current, memory):
                found.append(f"{memory.id} (created by the capture, changed since)")
        for target, _, after in self.changed:
            current = self.now.get((target, after.id))
            if current is None:
                found.append(f"{after.id} (gone since the capture)")
            elif differs(current, after):
                found.append(f"{after.id} (changed since the capture)")
        for target, memory in self.deleted:
            if (target, memory.id) in self.now:
                found.append(f"{memory.id} (pruned by the capture, present again)")
        return found

    def writes(self, target: Scope) -> tuple[list[Memory], list[tuple[Memory, Memory, bool]], list[str]]:
        """The memories to add back, replace and delete in ``target``."""
        replaces = [(self.now[(s, b.id)], with_later_uses(b, a, self.now[(s, b.id)]), False)
                    for s, b, a in self.changed if s == target and (s, b.id) in self.now]
        adds = [m for s, m in self.deleted if s == target and (s, m.id) not in self.now]
        deletes = [m.id for s, m in self.created if s == target and (s, m.id) in self.now]
        self.restored += [old.id for old, _, _ in replaces] + [m.id for m in adds]
        self.removed += deletes
        return adds, replaces, deletes


__all__ = ["check_run", "latest", "listed", "save", "superseded", "undo"]
