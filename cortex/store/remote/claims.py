"""Claims on memories: how writers of a shared SPARQL store take turns on the memories they change (the servers
offer no compare-and-set), and what a writer checks while it holds them."""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from cortex.errors import StoreError, VersionConflictError
from cortex.model import Memory, Scope, utcnow
from cortex.store.remote.changelog import ChangeLog
from cortex.store.remote.protocol import IDS_PER_READ

log = logging.getLogger("cortex.store")

#: Seconds a claim on memories holds when its writer dies before releasing it (at least the request time-out).
CLAIM_LEASE = 60.0


def _stamp(moment: datetime) -> str:
    """A claim's time: UTC with microseconds, so that times compare as strings."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class _Claim:
    """Memories a writer holds (see :meth:`Claims._claim`): their claim subjects and the operation that
    releases them (sent with the write itself)."""

    subjects: Sequence[NamedNode]
    release: tuple[str, ...]
    #: the value of each claim triple, "<expiry> <token>" (a journal names the claims it holds)
    value: str = ""

    @property
    def token(self) -> str:
        return self.value.split(" ", 1)[-1] if self.value else ""

    def released(self) -> "_Claim":
        return _Claim(self.subjects, (), self.value)


class Claims(ChangeLog):
    """Claims, and the reads a writer makes under them (a base of :class:`~cortex.store.remote.RemoteStore`)."""

    def _settle(self, tokens: set[str]) -> bool:
        """Whether expired claims with these tokens belong to an unfinished journaled write (a base has none):
        then it was finished first, or is still within its journal's lease, and the claim is tried again."""
        return False

    def _claim(self, scope: Scope, memory_ids: Sequence[str], adopt: frozenset[str] = frozenset()) -> "_Claim":
        """Claim memories for one write: the linearization point of writes to a shared store.

        SPARQL servers run concurrent updates on snapshots without conflict detection, and offer no
        compare-and-set; what they do offer is a linearizable insert and read. So each writer inserts a claim
        triple (``agentmem:claim "<expiry> <token>"`` on ``{ns}:claim:{scope}:{id}``, in the log graph), then
        reads every claim on those memories: it goes ahead only when no other live claim is there, else it
        withdraws and tries again after a random wait. Two writers can never both see only their own claim (the
        later reader sees the earlier insert), so at most one holds a memory at a time. A claim is released in
        the same request as the write; one whose writer died expires after :data:`CLAIM_LEASE` seconds, unless a
        journal names it (a write that spans requests, :mod:`cortex.store.remote.journal`): then that write is
        finished first (``adopt``: the tokens of the journal a recovery finishes, whose claims it takes over)."""
        if not memory_ids:
            return _Claim((), ())
        g, p_claim = self.codec.log_graph, self.vocab.predicate("claim")
        subjects = [NamedNode(f"{self.vocab.ns}:claim:{scope.key}:{i}") for i in dict.fromkeys(memory_ids)]
        chunks = [subjects[i:i + IDS_PER_READ] for i in range(0, len(subjects), IDS_PER_READ)]
        lease = max(CLAIM_LEASE, self.endpoint.timeout + 5)
        deadline = time.monotonic() + lease
        attempt = 0
        while True:
            now = _stamp(utcnow())
            mine = Literal(f"{_stamp(utcnow() + timedelta(seconds=lease))} {os.urandom(8).hex()}")
            claims = [Quad(s, p_claim, mine, g) for s in subjects]
            release = tuple(f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(claims[i:i + IDS_PER_READ])} }} }}"
                            for i in range(0, len(claims), IDS_PER_READ))
            self._update(self.codec.insert_data(claims, IDS_PER_READ), "a claim")
            others = [(row["s"], row["c"]) for chunk in chunks for row in self._select(
                f"SELECT ?s ?c WHERE {{ VALUES ?s {{ {' '.join(str(s) for s in chunk)} }} GRAPH {g} {{ "
                f"?s {p_claim} ?c }} }}", ("s", "c"))
                if row["c"].value != mine.value and row["c"].value.split(" ", 1)[-1] not in adopt]
            dead = [(s, c) for s, c in others if c.value.split(" ", 1)[0] < now]
            stale = [Quad(s, p_claim, c, g) for s, c in dead]
            # a dead writer's journaled write is finished first (or still runs, within its journal's lease)
            unfinished = bool(dead) and self._settle({c.value.split(" ", 1)[-1] for _, c in dead} - adopt)
            if stale and not unfinished:  # claims of writers that died holding them
                self._update([f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(stale[i:i + IDS_PER_READ])} }} }}"
                              for i in range(0, len(stale), IDS_PER_READ)], "the removal of expired claims")
            if len(others) == len(stale) and not unfinished:
                return _Claim(subjects, release, mine.value)
            self._update(list(release), "a claim's withdrawal")
            if time.monotonic() > deadline:
                raise StoreError(f"memories of {scope.label} stayed claimed by another Cortex process for "
                                 f"{lease:.0f} s on the SPARQL server at {self.location}; try again")
            attempt += 1
            time.sleep(min(0.5, 0.005 * 2 ** attempt) * (0.5 + random.random()))

    def _release(self, claim: "_Claim") -> None:
        """Withdraw a claim this process still holds (the write did not happen)."""
        if claim.release:
            try:
                self._update(list(claim.release), "a claim's withdrawal")
            except StoreError as exc:  # it expires by itself
                log.warning("%s", exc)

    # -- checks under a claim --------------------------------------------------------------------

    def _by_id(self, scope: Scope, memory_ids: Sequence[str], query: Callable[[str], str],
               required: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The rows of ``query(values)`` (``values``: the memories' IRIs, a chunk at a time), with the id of the
        memory each row's ``?m`` is."""
        for start in range(0, len(memory_ids), IDS_PER_READ):
            values = self.codec.values(scope, memory_ids[start:start + IDS_PER_READ])
            for row in self._select(query(values), required):
                mid = self.vocab.memory_id(scope, row["m"].value)
                if mid is not None:
                    yield mid, row

    def _current(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[tuple[Any, Any]]]:
        """The (predicate, object) terms of each memory that exists, by id."""
        found: dict[str, list[tuple[Any, Any]]] = {}
        graph = self.vocab.graph(scope)
        for mid, row in self._by_id(scope, memory_ids, lambda values: f"SELECT ?m ?p ?o WHERE {{ VALUES ?m {{ "
                                    f"{values} }} GRAPH {graph} {{ ?m ?p ?o }} }}", ("m", "p", "o")):
            found.setdefault(mid, []).append((row["p"], row["o"]))
        return found

    def _require_existing(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        """Raise :class:`VersionConflictError` (actual version 0) when one of the memories is gone: another
        process deleted it since the caller looked (so a delete reports only what it deleted)."""
        if memory_ids:
            graph, content = self.vocab.graph(scope), self.vocab.predicate("content")
            found = {mid for mid, _ in self._by_id(scope, list(memory_ids), lambda values: (
                f"SELECT ?m WHERE {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m {content} ?c }} }}"), ("m",))}
            for memory_id in memory_ids:
                if memory_id not in found:
                    raise VersionConflictError(memory_id, 1, 0)

    _IGNORED = ("usage_count", "last_used_at")

    def _holds(self, scope: Scope, new: Memory, pairs: Sequence[tuple[Any, Any]]) -> bool:
        """Whether the memory's stored triples are exactly ``new``'s fields (uses aside): a replacement that lost
        a race to another writer's, or applied beside it, does not (two values of a field, or other values)."""
        single = {node.value for f, node in self.codec.fields}
        counts: dict[str, int] = {}
        for p, _ in pairs:
            if p.value in single:
                counts[p.value] = counts.get(p.value, 0) + 1
        if not pairs or any(n > 1 for n in counts.values()):
            return False
        got = self.codec.decode(scope, new.id, ((p.value, o.value) for p, o in pairs if p != self.codec.p_used))
        return got is not None and got.model_dump(exclude=set(self._IGNORED)) == \
            new.model_dump(exclude=set(self._IGNORED))
