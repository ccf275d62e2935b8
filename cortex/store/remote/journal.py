"""Writes that span requests, made recoverable: the intent is recorded first, in one request, then applied, then
marked done in the request that logs the change; any process finishes a write whose writer died.

A SPARQL server makes each update request one transaction, but a large write (thousands of memories, a
consolidation run superseding hundreds) takes several requests, and a writer killed between two of them used to
leave part of it: memories superseded without the run's record, an import's memories without their change record.
So such a write first inserts a **journal entry** (``{ns}:journal:{token}`` in the log graph): its scope, every
memory id it names, every request it is about to send (the exact update operations, or the Graph Store bodies),
the claims it holds and an expiry. It claims every memory it names (see :meth:`Claims._claim`), sends the
requests, and deletes the entry in the request that appends its change record and releases its claims.

A writer that dies leaves the entry and its claims. The entry is finished (*rolled forward*: its requests sent
again, which is safe because each is ``INSERT DATA``/``DELETE DATA`` or a delete by pattern of memories nobody
else could change while they stayed claimed, then the change record) by: any process that opens the store, and
any writer that meets one of its expired claims (so nothing changes those memories before the write is whole).
The entry's expiry grows with the number of requests, so a live writer's journal is never finished under it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from cortex.errors import StoreError
from cortex.model import Scope, utcnow
from cortex.store.base import Change
from cortex.store.remote.claims import CLAIM_LEASE, Claims, _Claim, _stamp
from cortex.store.remote.protocol import DELETES_PER_OPERATION, OPERATIONS_PER_REQUEST

log = logging.getLogger("cortex.store")

#: A request of a journaled write: update operations, or (graph IRI, N-Triples body) for the Graph Store.
Step = list[str] | tuple[str, str]


class Journal(Claims):
    """Journaled writes and their recovery (a base of :class:`~cortex.store.remote.RemoteStore`)."""

    def _journal_terms(self) -> tuple[NamedNode, ...]:
        p = self.vocab.predicate
        return p("journalScope"), p("journalExpires"), p("journalIds"), p("journalStep"), p("journalHolds")

    def _change(self, scope: Scope, memory_ids: Sequence[str], operations: list[str], what: str,
                texts_stay: bool = False, claim: _Claim | None = None, new: bool = False) -> Change:
        """Apply ``operations`` and log the change: in one request when they fit, else journaled (see the
        module's docstring). ``claim``: the claim the caller holds on some of the memories, released with the
        change record; ``new``: the write only adds new memories, so an unfinished one is rolled back (its
        memories deleted by id) and its journal holds their ids, not its data."""
        release = list(claim.release) if claim is not None else []
        if len(operations) + len(release) <= OPERATIONS_PER_REQUEST:
            return super()._change(scope, memory_ids, [*operations, *release], what, texts_stay)
        steps: list[Step] = [operations[i:i + OPERATIONS_PER_REQUEST]
                             for i in range(0, len(operations), OPERATIONS_PER_REQUEST)]
        return self._journaled(scope, memory_ids, steps, what, claim, texts_stay, new)

    def _journaled(self, scope: Scope, memory_ids: Sequence[str], steps: Sequence[Step], what: str,
                   claim: _Claim | None = None, texts_stay: bool = False, new: bool = False) -> Change:
        """Record the intent (one request), send ``steps``, then log the change, delete the intent and release
        every claim in one last request. The intent is ``steps`` (rolled forward), or for ``new`` memories only
        their ids (rolled back: nobody else knows them before their change record, so they are not claimed)."""
        ids = list(dict.fromkeys(memory_ids))
        held = {s.value for s in claim.subjects} if claim is not None else set()
        prefix = f"{self.vocab.ns}:claim:{scope.key}:"
        own = self._claim(scope, [] if new else [i for i in ids if prefix + i not in held])
        claims = [c for c in (claim, own) if c is not None and c.token]
        try:
            entry = NamedNode(f"{self.vocab.ns}:journal:{os.urandom(8).hex()}")
            p_scope, p_expires, p_ids, p_step, p_holds = self._journal_terms()
            lease = self._lease(len(steps))
            g = self.codec.log_graph
            quads = [Quad(entry, p_scope, self.vocab.graph(scope), g),
                     Quad(entry, p_expires, Literal(_stamp(utcnow() + timedelta(seconds=lease))), g),
                     Quad(entry, p_ids, Literal(json.dumps(ids)), g)]
            quads += [Quad(entry, p_holds, Literal(c.value), g) for c in claims]
            quads += [Quad(entry, p_step, Literal(json.dumps([n, step])), g)
                      for n, step in enumerate(() if new else steps)]
            if new:
                quads.append(Quad(entry, self.vocab.predicate("journalRollsBack"), Literal("true"), g))
            self._update(self.codec.insert_data(quads, 50), f"the journal of {what}")
            for step in steps:
                self._send_step(step, what)
            release = [op for c in claims for op in c.release]
            change = super()._change(scope, ids, [*release, self._forget(entry)], what, texts_stay)
            claim, own = None, own.released()
        finally:
            if claim is not None:
                self._release(claim)
            self._release(own)
        return change

    def _lease(self, steps: int) -> float:
        """Seconds a journaled write of ``steps`` requests may take before another process finishes it: a claim's
        lease, and a time-out and its retries per request."""
        return max(CLAIM_LEASE, self.endpoint.timeout + 5) + steps * (self.endpoint.timeout + 10)

    def _send_step(self, step: Step, what: str) -> None:
        if isinstance(step, list):
            self._update(step, what)
        elif self.endpoint.gsp_url is not None:
            self._send(self.endpoint.gsp_url, content=step[1].encode("utf-8"), params={"graph": step[0]},
                       headers={"Content-Type": "application/n-triples"}, idempotent=False, what=what)
        else:
            self._update([f"INSERT DATA {{ GRAPH {NamedNode(step[0])} {{ {step[1]} }} }}"], what)

    def _forget(self, entry: NamedNode) -> str:
        g = self.codec.log_graph
        return f"DELETE {{ GRAPH {g} {{ {entry} ?p ?o }} }} WHERE {{ GRAPH {g} {{ {entry} ?p ?o }} }}"

    # -- recovery --------------------------------------------------------------------------------

    def _settle(self, tokens: set[str]) -> bool:
        """Finish the unfinished writes whose journals hold claims with these tokens (expired ones; those still
        within their lease are left to their writer): True when there was any."""
        if not tokens:
            return False
        _, p_expires, _, _, p_holds = self._journal_terms()
        found = {row["j"].value: row["e"].value for row in self._select(
            f"SELECT ?j ?e WHERE {{ GRAPH {self.codec.log_graph} {{ ?j {p_holds} ?h ; {p_expires} ?e }} "
            f"FILTER(STRAFTER(STR(?h), \" \") IN ({', '.join(str(Literal(t)) for t in sorted(tokens))})) }}",
            ("j", "e"))}
        now = _stamp(utcnow())
        for entry, expires in found.items():
            if expires < now:
                self._recover(NamedNode(entry))
        return bool(found)

    def recover(self) -> int:
        """Finish every write whose writer died part way (its journal expired); returns how many."""
        _, p_expires, _, _, _ = self._journal_terms()
        now = _stamp(utcnow())
        rows = self._select(f"SELECT ?j ?e WHERE {{ GRAPH {self.codec.log_graph} {{ ?j {p_expires} ?e }} }}",
                            ("j", "e"))
        expired = [row["j"].value for row in rows if row.get("j") is not None and row.get("e") is not None
                   and row["e"].value < now]
        for entry in expired:
            self._recover(NamedNode(entry))
        return len(expired)

    def _read_entry(self, entry: NamedNode) -> dict[str, Any] | None:
        p_scope, _, p_ids, p_step, p_holds = self._journal_terms()
        rows = self._select(f"SELECT ?p ?o WHERE {{ GRAPH {self.codec.log_graph} {{ {entry} ?p ?o }} }}", ("p", "o"))
        if not rows:
            return None
        found: dict[str, Any] = {"steps": [], "holds": []}
        for row in rows:
            p, o = row["p"].value, row["o"].value
            if p == p_scope.value:
                found["scope"] = self.vocab.scope_of_graph(o)
            elif p == p_ids.value:
                found["ids"] = json.loads(o)
            elif p == p_step.value:
                found["steps"].append(json.loads(o))
            elif p == p_holds.value:
                found["holds"].append(o)
            elif p == self.vocab.predicate("journalRollsBack").value:
                found["back"] = True
        if found.get("scope") is None or "ids" not in found:
            raise StoreError(f"the journal entry {entry.value} on the SPARQL server at {self.location} is "
                             f"incomplete; remove it by hand")
        found["steps"] = [step if isinstance(step, list) else tuple(step) for _, step in sorted(found["steps"])]
        return found

    def _recover(self, entry: NamedNode) -> None:
        """Finish a dead writer's journaled write: take over its claims, send its requests again, log it."""
        found = self._read_entry(entry)
        if found is None:
            return
        scope: Scope = found["scope"]
        ids: list[str] = found["ids"]
        tokens = frozenset(h.split(" ", 1)[-1] for h in found["holds"])
        claim = self._claim(scope, ids, adopt=tokens)
        try:
            if self._read_entry(entry) is None:  # another process finished it meanwhile
                return
            log.warning("%s a write to %s that a Cortex process left unfinished (%d memories)",
                        "rolling back" if found.get("back") else "finishing", scope.label, len(ids))
            if found.get("back"):  # new memories: removed again, by id
                undo = self.codec.delete_operations(scope, ids, DELETES_PER_OPERATION)
                found["steps"] = [undo[i:i + OPERATIONS_PER_REQUEST] for i in range(0, len(undo), OPERATIONS_PER_REQUEST)]
            for step in found["steps"]:
                self._send_step(step, "the recovery of an unfinished write")
            g, p_claim = self.codec.log_graph, self.vocab.predicate("claim")
            prefix = f"{self.vocab.ns}:claim:{scope.key}:"
            dead = [Quad(NamedNode(prefix + i), p_claim, Literal(h), g) for i in ids for h in found["holds"]]
            ops = [f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(dead[i:i + 500])} }} }}"
                   for i in range(0, len(dead), 500)]
            super()._change(scope, ids, [*ops, *claim.release, self._forget(entry)],
                            "the recovery of an unfinished write")
            claim = claim.released()
        finally:
            self._release(claim)
