"""The remote store itself: memories written (claimed first when they change) and read on a SPARQL 1.1 server."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx
import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad

from cortex.errors import StoreError, VersionConflictError
from cortex.model import Memory, Scope
from cortex.provenance import Activity
from cortex.store.base import Change
from cortex.store.rdf import MemoryCodec, sparql_term
from cortex.store.remote.answers import unreadable_answers_are_store_errors
from cortex.store.remote.endpoint import Endpoint, http_auth
from cortex.store.remote.journal import Journal, Step
from cortex.store.remote.protocol import (DELETES_PER_OPERATION, GSP_MEMORIES, GSP_TRIPLES, MEMORIES_PER_OPERATION,
                                          OPERATIONS_PER_REQUEST)
from cortex.store.remote.queries import AgentQueries
from cortex.vocab import Vocabulary, integer

log = logging.getLogger("cortex.store")


@unreadable_answers_are_store_errors
class RemoteStore(AgentQueries, Journal):
    """A :class:`~cortex.store.base.MemoryStore` on a SPARQL 1.1 server, safe to share between processes."""

    #: Other processes write to this store: derived indexes check its change log before each operation.
    shared = True
    #: Query bindings travel in the query's text (a ``VALUES`` clause), not as an option of the engine.
    substitutes = False
    #: A server takes every writer: never opened read-only.
    read_only = False

    def __init__(self, location: str | Endpoint, vocabulary: Vocabulary, *,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = location if isinstance(location, Endpoint) else Endpoint.parse(location)
        self.vocab = vocabulary
        self.codec = MemoryCodec(vocabulary)
        timeout = httpx.Timeout(self.endpoint.timeout, connect=min(5.0, self.endpoint.timeout))
        self._client = httpx.Client(auth=http_auth(self.endpoint), timeout=timeout,
                                    transport=transport, headers={"User-Agent": "cortex"})
        self._closed = False
        #: per scope, the latest log number this process has seen (its next write is numbered after it) and
        #: the head values it has read (its next write replaces them: see MemoryCodec.shared_change)
        self._hints: dict[Scope, int] = {}
        self._heads: dict[Scope, set[str]] = {}
        # contents read before: valid while the log names no change to them (the indexes read the log before
        # every operation, through changes(), which drops what it names)
        self._texts: dict[tuple[Scope, str], str] = {}
        self._confines: bool | None = None  # whether the server honours a query's dataset (asked when needed)
        self.ping()
        try:  # a write another process left unfinished (it died part way) is finished before anything is read
            self.recover()
        except StoreError as exc:  # a read-only account, say: its writers finish it
            log.warning("%s", exc)

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def local_path(self) -> None:
        return None

    def ping(self) -> None:
        """One ``ASK {}``: raises :class:`StoreError` when the server cannot be reached or refuses."""
        self._select("ASK {}")

    def flush(self) -> None:
        """Nothing to do: the server made each write durable before answering."""

    def close(self, flush: bool = True) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()

    # -- writes ----------------------------------------------------------------------------------

    def _insert_ops(self, scope: Scope, memories: Sequence[Memory]) -> list[str]:
        graph, quads, step = self.vocab.graph(scope), self.codec.quads, MEMORIES_PER_OPERATION
        cache: dict[Any, Literal] = {}
        return [f"INSERT DATA {{ GRAPH {graph} {{ "
                f"{self.codec.triples(q for m in memories[i:i + step] for q in quads(scope, m, cache))} }} }}"
                for i in range(0, len(memories), step)]

    def _provenance_ops(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None,
                        derived: Sequence[tuple[str, str]], changed: Sequence[Memory] = (),
                        deleted: Sequence[str] = ()) -> list[str]:
        quads = self.codec.derived_quads(scope, derived) + self.codec.write_activity_quads(scope, activity, memories,
                                                                                            changed, deleted)
        return self._quad_ops(quads) if quads else []

    def _quad_ops(self, quads: Sequence[Quad]) -> list[str]:
        return self.codec.insert_data(quads, MEMORIES_PER_OPERATION * 10)

    def add(self, scope: Scope, memories: Sequence[Memory], activity: Activity | None = None,
            extra: Sequence[ox.Triple] = ()) -> Change:
        what = f"a write of {len(memories)} memories"
        graph = self.vocab.graph(scope)
        others = [Quad(t.subject, t.predicate, t.object, graph) for t in extra]
        if self.endpoint.gsp_url is not None and len(memories) >= GSP_MEMORIES:
            cache: dict[Any, Literal] = {}
            quads = [q for m in memories for q in self.codec.quads(scope, m, cache)] + others
            if activity is not None:
                quads += self.codec.activity_quads(scope, activity, os.urandom(8).hex(), memories)
            change = self._journaled(scope, [m.id for m in memories], self._bulk_steps(quads), what, new=True)
        else:
            ops = self._insert_ops(scope, memories) + self._provenance_ops(scope, memories, activity, ())
            ops += self._quad_ops(others) if others else []
            # more than one request: journaled (see cortex.store.remote.journal)
            change = self._change(scope, [m.id for m in memories], ops, what, new=True)
        self._keep_texts(scope, memories)
        return change

    def _bulk_steps(self, quads: Sequence[Quad]) -> list[Step]:
        """Quads as Graph Store Protocol requests (``POST ?graph=``, N-Triples), each graph in requests of at most
        :data:`GSP_TRIPLES` triples: ~10x the rate of ``INSERT DATA`` on Virtuoso."""
        by_graph: dict[str, list[Quad]] = {}
        for q in quads:
            by_graph.setdefault(q.graph_name.value, []).append(q)  # type: ignore[union-attr]
        return [(graph, "".join(f"{sparql_term(q.subject)} {q.predicate} {sparql_term(q.object)} .\n"
                                for q in group[start:start + GSP_TRIPLES]))
                for graph, group in by_graph.items() for start in range(0, len(group), GSP_TRIPLES)]

    def _bulk(self, quads: Sequence[Quad], what: str) -> None:
        """Add quads through the Graph Store Protocol (see :meth:`_bulk_steps`), unjournaled."""
        for step in self._bulk_steps(quads):
            self._send_step(step, what)

    def load(self, data: Mapping[Scope, Sequence[Quad]], check: Callable[[], Mapping[Scope, Sequence[str]]],
             source: tuple[bytes, ox.RdfFormat] | None = None) -> dict[Scope, Change]:
        judged = check()  # before the first request: a server has no journal to undo a load with
        batches = {scope: (quads, judged.get(scope, ())) for scope, quads in data.items()}
        records = {scope: self._record(scope, ids) for scope, (_, ids) in batches.items()}
        for scope, (_, ids) in batches.items():
            self._drop_texts(scope, ids)
        logs = [op for _, record_ops in records.values() for op in record_ops]
        what = f"an import of {sum(len(ids) for _, ids in batches.values())} memories"
        if self.endpoint.gsp_url is not None and sum(len(ids) for _, ids in batches.values()) >= GSP_MEMORIES:
            self._bulk([q for data, _ in batches.values() for q in data], what)
            self._update(logs, what)
        else:
            ops = [op for data, _ in batches.values() for op in self._quad_ops(data)]
            if len(ops) + len(logs) <= OPERATIONS_PER_REQUEST:
                self._update([*ops, *logs], what)
            else:
                for start in range(0, len(ops), OPERATIONS_PER_REQUEST):
                    self._update(ops[start:start + OPERATIONS_PER_REQUEST], what)
                self._update(logs, what)
        for scope, (change, _) in records.items():
            self._moved(scope, change)
        return {scope: change for scope, (change, _) in records.items()}

    def export(self, scope: Scope) -> Iterator[Quad]:
        for graph in (self.vocab.graph(scope), self.vocab.prov_graph(scope)):
            yield from (Quad(t.subject, t.predicate, t.object, graph) for t in self._whole_graph(graph, scope))

    def _whole_graph(self, graph: NamedNode, scope: Scope) -> list[ox.Triple]:
        """Every triple of a graph, checked against a count taken before and after: a server that truncates
        results (Virtuoso's ResultSetMaxRows) is an error, never a silently partial graph."""
        count = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"
        before = int(self._select(count)[0]["n"].value)
        triples = self._graph(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
        if len(triples) < before:  # or writes removed some meanwhile: then the count after is lower too
            after = int(self._select(count)[0]["n"].value)
            if len(triples) < min(before, after):
                raise StoreError(f"the SPARQL server at {self.location} returned {len(triples)} of the {after} "
                                 f"triples of {scope.label}: it truncates results (Virtuoso: raise ResultSetMaxRows)")
        return triples

    def write(self, scope: Scope, adds: Sequence[Memory], replaces: Sequence[tuple[Memory, Memory, bool]],
              deletes: Sequence[str] = (), activity: Activity | None = None,
              derived: Sequence[tuple[str, str]] = (), unlink: Sequence[tuple[str, str]] = (),
              extra: Sequence[Quad] = (), retract: Sequence[Quad] = ()) -> Change:
        # The server does not serialise read-modify-write updates, so the memories a write changes are claimed
        # first (see _claim): while this process holds them, it checks that the store holds exactly what the
        # caller read (every field, not only the version: a supersession or a validation keeps it), then writes.
        graph = self.vocab.graph(scope)
        claim = self._claim(scope, [old.id for old, _, _ in replaces] + list(deletes))
        try:
            current = self._current(scope, [old.id for old, _, _ in replaces])
            self._require_existing(scope, deletes)
            ops = self.codec.delete_operations(scope, deletes, DELETES_PER_OPERATION)
            for old, new, archive in replaces:
                pairs = current.get(old.id, [])
                if not self._holds(scope, old, pairs):
                    stored = self.codec.stored_version(Quad(self.vocab.memory(scope, old.id), p, o, graph)
                                                       for p, o in pairs) if pairs else 0
                    raise VersionConflictError(old.id, old.version, stored)  # changed since it was read
                ops += self._replace_ops(scope, old, new, archive, pairs)
            if unlink:
                ops.append(f"DELETE DATA {{ GRAPH {graph} {{ "
                           f"{self.codec.triples(self.codec.derived_quads(scope, unlink))} }} }}")
            ops += self.codec.delete_data(retract, MEMORIES_PER_OPERATION * 10) if retract else []
            ops += self._insert_ops(scope, adds) + self._provenance_ops(scope, adds, activity, derived,
                                                                        [new for _, new, _ in replaces], deletes)
            ops += self._quad_ops(extra) if extra else []
            ids = list(dict.fromkeys([m.id for m in adds] + [old.id for old, _, _ in replaces] + list(deletes)))
            change = self._change(scope, ids, ops, "an update", claim=claim)
            claim = claim.released()
        finally:
            self._release(claim)
        self._keep_texts(scope, list(adds))
        return change

    def _replace_ops(self, scope: Scope, old: Memory, new: Memory, archive: bool,
                     pairs: Sequence[tuple[Any, Any]]) -> list[str]:
        """Replace ``old``'s triples (``pairs``: as the server holds them, read under this writer's claim) by
        ``new``'s: exactly the difference, as ``DELETE DATA`` and ``INSERT DATA`` (no pattern for the server to
        match: Virtuoso's plan for a conditional ``DELETE/INSERT ... WHERE`` stopped matching anything once a
        graph held ~150 updated memories, silently). Its use triples, stored count and last use and its
        provenance links are kept (touches that race the update are never lost)."""
        g, m = self.vocab.graph(scope), self.vocab.memory(scope, old.id)
        uc, lu = self.vocab.predicate("usageCount"), self.vocab.predicate("lastUsedAt")
        wanted = [q for q in self.codec.quads(scope, new) if q.predicate not in (uc, lu)]
        wanted += [Quad(m, p, o, g) for p, o in pairs if p in (uc, lu) and (p != uc or new.usage_count == old.usage_count)]
        if new.usage_count != old.usage_count:
            # a deliberate change of the count (a merge sums its memories', an undo restores it): the stored count
            # moves by as much, the use triples (touches racing it) stay counted on top
            stored = next((int(o.value) for p, o in pairs if p == uc), 0)
            wanted.append(Quad(m, uc, integer(max(0, stored + new.usage_count - old.usage_count)), g))
        have, want = {(p, o) for p, o in pairs}, {(q.predicate, q.object) for q in wanted}
        removes = [Quad(m, p, o, g) for p, o in pairs if p not in self.codec.kept and (p, o) not in want]
        inserts = [q for q in wanted if (q.predicate, q.object) not in have]
        if archive:
            inserts += self.codec.version_quads(scope, old)
        ops = [f"DELETE DATA {{ GRAPH {g} {{ {self.codec.triples(removes)} }} }}"] if removes else []
        return ops + (self.codec.insert_data(inserts, MEMORIES_PER_OPERATION * 10) if inserts else [])

    def versions(self, scope: Scope, memory_id: str) -> list[Memory]:
        by_version: dict[str, list[tuple[str, str]]] = {}
        for row in self._select(self.codec.versions_query(scope, memory_id), ("v", "p", "o")):
            by_version.setdefault(row["v"].value, []).append((row["p"].value, row["o"].value))
        found = [self.codec.decode(scope, memory_id, pairs) for pairs in by_version.values()]
        return sorted((m for m in found if m is not None), key=lambda m: m.version)

    def touch(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> Change:
        g = self.vocab.graph(scope)
        rows = " ".join(f"({self.vocab.memory(scope, i)} {self.codec.use_literal(now, os.urandom(8).hex())})"
                        for i in memory_ids)
        op = (f"INSERT {{ GRAPH {g} {{ ?m {self.codec.p_used} ?u }} }} WHERE {{ VALUES (?m ?u) {{ {rows} }} "
              f"GRAPH {g} {{ ?m {self.vocab.predicate('content')} ?c }} }}")
        return self._change(scope, memory_ids, [op], "a touch", texts_stay=True)

    def delete(self, scope: Scope, memory_ids: Sequence[str]) -> Change:
        claim = self._claim(scope, memory_ids)  # never beside a write of the same memories
        try:
            self._require_existing(scope, memory_ids)
            change = self._change(scope, memory_ids, self.codec.delete_operations(scope, memory_ids,
                                                                                  DELETES_PER_OPERATION),
                                  "a delete", claim=claim)
            claim = claim.released()
        finally:
            self._release(claim)
        return change

    # -- reads -----------------------------------------------------------------------------------

    def get_many(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory | None]:
        # the fields, and the use triples counted by the server (a popular memory has thousands)
        graph, used = self.vocab.graph(scope), self.codec.p_used
        wanted = list(dict.fromkeys(memory_ids))
        pairs: dict[str, list[tuple[str, str]]] = {}
        uses: dict[str, tuple[int, str]] = {}

        def query(values: str) -> str:
            return (f"SELECT ?m ?p ?o ?n ?last WHERE {{ {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m ?p ?o }} "
                    f"FILTER(?p != {used}) }} UNION {{ SELECT ?m (COUNT(?u) AS ?n) (MAX(STR(?u)) AS ?last) WHERE {{ "
                    f"VALUES ?m {{ {values} }} GRAPH {graph} {{ ?m {used} ?u }} }} GROUP BY ?m }} }}")

        for mid, row in self._by_id(scope, wanted, query, ("m",)):
            if row.get("p") is not None:
                pairs.setdefault(mid, []).append((row["p"].value, row["o"].value))
            elif row.get("n") is not None and row.get("last") is not None:
                uses[mid] = (int(row["n"].value), row["last"].value)
        decode = self.codec.decode
        found = [decode(scope, i, pairs[i], uses.get(i)) if i in pairs else None for i in memory_ids]
        self._keep_texts(scope, [m for m in found if m is not None])
        return found

    def contents(self, scope: Scope, memory_ids: Sequence[str]) -> list[str | None]:
        graph, predicate = self.vocab.graph(scope), self.vocab.predicate("content")
        texts = self._texts
        missing = [i for i in dict.fromkeys(memory_ids) if (scope, i) not in texts]
        found = {mid: row["c"].value for mid, row in self._by_id(
            scope, missing, lambda values: f"SELECT ?m ?c WHERE {{ VALUES ?m {{ {values} }} GRAPH {graph} {{ "
                                           f"?m {predicate} ?c }} }}", ("m", "c"))}
        self._remember_texts(scope, found)
        return [found[i] if i in found else texts.get((scope, i)) for i in memory_ids]

    def iter_memories(self, scope: Scope) -> Iterator[Memory]:
        by_subject: dict[str, list[tuple[str, str]]] = {}
        for t in self._whole_graph(self.vocab.graph(scope), scope):
            if isinstance(t.subject, NamedNode):
                value = str(t.object) if isinstance(t.object, ox.Triple) else t.object.value
                by_subject.setdefault(t.subject.value, []).append((t.predicate.value, value))
        memory_id, decode = self.vocab.memory_id, self.codec.decode
        scanned: dict[str, str] = {}
        for subject, pairs in by_subject.items():
            mid = memory_id(scope, subject)
            if mid is not None:
                memory = decode(scope, mid, pairs)
                if memory is not None:
                    scanned[mid] = memory.content  # a rebuild's scan: recall's hits cost no round trip
                    yield memory
        self._remember_texts(scope, scanned)

    def count(self, scope: Scope) -> int:
        return int(self._select(self.codec.count_query(scope))[0]["n"].value)

    def find_content(self, scope: Scope, content: str, project: str) -> list[str]:
        g = self.vocab.graph(scope)
        content_p = self.vocab.predicate("content")
        rows = self._select(f"SELECT ?m WHERE {{ GRAPH {g} {{ ?m {content_p} {Literal(content)} ; "
                            f"{self.vocab.predicate('project')} {Literal(project)} }} }}")
        ids = (self.vocab.memory_id(scope, row["m"].value) for row in rows)
        return [i for i in ids if i is not None]
