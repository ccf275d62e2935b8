"""The embedded default backend: pyoxigraph (RocksDB) on disk, or in memory.

pyoxigraph facts this module is shaped by (0.5.x): only single calls are atomic, so every write is one
``extend``, one ``bulk_extend`` batch or one SPARQL ``update``; there is no ``close()``, the RocksDB lock is
released when the Store object is collected; a second opener of the same directory gets an OSError about
the ``LOCK`` file, which becomes :class:`StoreLockedError`.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad, Variable

from cortex import vocab
from cortex.errors import StoreError, StoreLockedError
from cortex.model import Memory, MemoryType
from cortex.vocab import Vocabulary

OWNER_FILE = "cortex-owner.json"
#: Batches at least this large go through ``bulk_extend`` (SST ingestion, ~5x faster than a transaction).
BULK_THRESHOLD = 1000
#: ``bulk_extend`` ingests each batch of up to 1,000,000 quads atomically; stay well below that.
BULK_CHUNK = 50_000


class OxigraphStore:
    """A :class:`~cortex.store.base.MemoryStore` on pyoxigraph."""

    def __init__(self, path: str | os.PathLike[str] | None, vocabulary: Vocabulary) -> None:
        self._path = Path(path).resolve() if path is not None else None
        self.vocab = vocabulary
        self._write_lock = threading.Lock()
        self._store = self._open()
        v = vocabulary
        self._select_all = (
            "SELECT * WHERE { GRAPH ?g { "
            "?m ?rdftype ?cls ; ?pc ?c ; ?pt ?t ; ?pp ?p ; ?pconf ?conf ; ?pu ?u ; ?pcr ?cr ; ?plu ?lu } }"
        )
        self._select_subs = {
            Variable("rdftype"): vocab.RDF_TYPE,
            Variable("cls"): v.memory_class,
            Variable("pc"): v.pred["content"],
            Variable("pt"): v.pred["type"],
            Variable("pp"): v.pred["project"],
            Variable("pconf"): v.pred["confidence"],
            Variable("pu"): v.pred["usageCount"],
            Variable("pcr"): v.pred["createdAt"],
            Variable("plu"): v.pred["lastUsedAt"],
        }

    # -- lifecycle -------------------------------------------------------------------------------

    def _open(self) -> ox.Store:
        if self._path is None:
            return ox.Store()
        try:
            self._path.mkdir(parents=True, exist_ok=True)
            store = ox.Store(str(self._path))
        except OSError as exc:
            message = str(exc)
            if "/LOCK" in message or "lock hold by current process" in message:
                raise StoreLockedError(self._path, self._owner_pid(exc)) from None
            raise StoreError(f"cannot open store {self._path}: {exc}") from exc
        (self._path / OWNER_FILE).write_text(json.dumps({"pid": os.getpid()}))
        return store

    def _owner_pid(self, exc: OSError) -> int | None:
        if "current process" in str(exc):
            return os.getpid()
        try:
            return int(json.loads((self._path / OWNER_FILE).read_text())["pid"])  # type: ignore[operator]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @property
    def path(self) -> Path | None:
        return self._path

    def flush(self) -> None:
        if self._path is not None:
            self._store.flush()

    def close(self, flush: bool = True) -> None:
        store = getattr(self, "_store", None)
        if store is None:
            return
        if flush and self._path is not None:
            store.flush()
        del self._store
        # The RocksDB lock goes with the last reference to the Store object (there is no close()). When
        # this is the last one, dropping it is enough; otherwise a cycle may hold it: collect (~10 ms).
        referenced = sys.getrefcount(store) > 2
        del store
        if referenced:
            gc.collect()

    # -- writes ----------------------------------------------------------------------------------

    def _quads(self, m: Memory, terms: dict[Any, Literal]) -> list[Quad]:
        # ``terms`` memoises the literals a batch repeats (type, project, confidence, count, timestamps)
        v = self.vocab
        g = v.graph(m.agent)
        s = v.memory(m.agent, m.id)
        p = v.pred

        def term(key: Any, make: Any) -> Literal:
            literal = terms.get(key)
            if literal is None:
                literal = terms[key] = make()
            return literal

        created = term(("t", m.created_at), lambda: vocab.date_time(m.created_at))
        return [
            Quad(s, vocab.RDF_TYPE, v.memory_class, g),
            Quad(s, v.agent_pred, v.agent(m.agent), g),
            Quad(s, p["content"], Literal(m.content), g),
            Quad(s, p["type"], term(("y", m.type), lambda: Literal(m.type.value)), g),
            Quad(s, p["project"], term(("p", m.project), lambda: Literal(m.project)), g),
            Quad(s, p["confidence"], term(("c", m.confidence), lambda: vocab.double(m.confidence)), g),
            Quad(s, p["usageCount"], term(("u", m.usage_count), lambda: vocab.integer(m.usage_count)), g),
            Quad(s, p["createdAt"], created, g),
            Quad(s, p["lastUsedAt"], term(("t", m.last_used_at), lambda: vocab.date_time(m.last_used_at)), g),
        ]

    def add(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        with self._write_lock:
            try:
                terms: dict[Any, Literal] = {}
                if len(memories) < BULK_THRESHOLD:
                    self._store.extend([q for m in memories for q in self._quads(m, terms)])
                    return
                for start in range(0, len(memories), BULK_CHUNK):
                    chunk = memories[start : start + BULK_CHUNK]
                    self._store.bulk_extend([q for m in chunk for q in self._quads(m, terms)])
            except OSError as exc:
                raise StoreError(f"writing {len(memories)} memories failed: {exc}") from exc

    def _values(self, agent: str, memory_ids: Sequence[str]) -> str:
        # Terms are serialised by pyoxigraph itself; ids were validated against [A-Za-z0-9_-]+.
        return " ".join(str(self.vocab.memory(agent, i)) for i in memory_ids)

    def touch(self, agent: str, memory_ids: Sequence[str], now: datetime) -> None:
        if not memory_ids:
            return
        g = self.vocab.graph(agent)
        uc, lu = self.vocab.pred["usageCount"], self.vocab.pred["lastUsedAt"]
        update = (
            f"DELETE {{ GRAPH {g} {{ ?m {uc} ?u . ?m {lu} ?l }} }} "
            f"INSERT {{ GRAPH {g} {{ ?m {uc} ?n . ?m {lu} {vocab.date_time(now)} }} }} "
            f"WHERE {{ VALUES ?m {{ {self._values(agent, memory_ids)} }} "
            f"GRAPH {g} {{ ?m {uc} ?u . ?m {lu} ?l }} BIND(?u + 1 AS ?n) }}"
        )
        with self._write_lock:
            self._update(update)

    def delete(self, agent: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        g = self.vocab.graph(agent)
        update = (
            f"DELETE {{ GRAPH {g} {{ ?m ?p ?o }} }} "
            f"WHERE {{ VALUES ?m {{ {self._values(agent, memory_ids)} }} GRAPH {g} {{ ?m ?p ?o }} }}"
        )
        with self._write_lock:
            self._update(update)

    def _update(self, update: str) -> None:
        try:
            self._store.update(update)
        except OSError as exc:
            raise StoreError(f"store update failed: {exc}") from exc

    # -- reads -----------------------------------------------------------------------------------

    def _memory(self, agent: str, memory_id: str, quads: Iterator[Quad]) -> Memory | None:
        fields: dict[str, str] = {}
        for quad in quads:
            field = self.vocab.field_of(quad.predicate)
            if field is not None:
                fields[field] = quad.object.value
        if len(fields) < len(vocab.FIELDS):
            return None
        return self._build(agent, memory_id, fields)

    @staticmethod
    def _build(agent: str, memory_id: str, f: dict[str, str]) -> Memory | None:
        try:
            # model_construct: the values come from our own typed literals, converted right here
            return Memory.model_construct(
                id=memory_id,
                agent=agent,
                content=f["content"],
                type=MemoryType(f["type"]),
                project=f["project"],
                confidence=float(f["confidence"]),
                usage_count=int(f["usageCount"]),
                created_at=vocab.parse_date_time(f["createdAt"]),
                last_used_at=vocab.parse_date_time(f["lastUsedAt"]),
            )
        except (ValueError, KeyError):
            return None  # not written by Cortex; an index rebuild must not fail on foreign data

    def get(self, agent: str, memory_id: str) -> Memory | None:
        subject = self.vocab.memory(agent, memory_id)
        return self._memory(agent, memory_id, self._store.quads_for_pattern(subject, None, None, self.vocab.graph(agent)))

    def get_many(self, agent: str, memory_ids: Sequence[str]) -> list[Memory | None]:
        return [self.get(agent, i) for i in memory_ids]

    def contents(self, agent: str, memory_ids: Sequence[str]) -> list[str | None]:
        graph, predicate = self.vocab.graph(agent), self.vocab.pred["content"]
        found: list[str | None] = []
        for memory_id in memory_ids:
            quads = self._store.quads_for_pattern(self.vocab.memory(agent, memory_id), predicate, None, graph)
            found.append(next((q.object.value for q in quads), None))
        return found

    def iter_memories(self, agent: str) -> Iterator[Memory]:
        prefix = self.vocab.memory_prefix(agent)
        subs = dict(self._select_subs)
        subs[Variable("g")] = self.vocab.graph(agent)
        for row in self._store.query(self._select_all, substitutions=subs):
            iri = row["m"].value
            if not iri.startswith(prefix):
                continue
            fields = {
                "content": row["c"].value, "type": row["t"].value, "project": row["p"].value,
                "confidence": row["conf"].value, "usageCount": row["u"].value,
                "createdAt": row["cr"].value, "lastUsedAt": row["lu"].value,
            }
            memory = self._build(agent, iri[len(prefix):], fields)
            if memory is not None:
                yield memory

    def count(self, agent: str) -> int:
        # Only our own IRIs (validated agent name, serialised by pyoxigraph) enter this query text;
        # substitutions cannot be used inside an aggregate-only projection.
        query = (
            f"SELECT (COUNT(?m) AS ?n) WHERE {{ GRAPH {self.vocab.graph(agent)} "
            f"{{ ?m {vocab.RDF_TYPE} {self.vocab.memory_class} }} }}"
        )
        return int(next(iter(self._store.query(query)))["n"].value)

    def find_content(self, agent: str, content: str, project: str) -> list[str]:
        prefix = self.vocab.memory_prefix(agent)
        rows = self._store.query(
            "SELECT * WHERE { GRAPH ?g { ?m ?pc ?c ; ?pp ?p } }",
            substitutions={
                Variable("g"): self.vocab.graph(agent),
                Variable("pc"): self.vocab.pred["content"],
                Variable("c"): Literal(content),
                Variable("pp"): self.vocab.pred["project"],
                Variable("p"): Literal(project),
            },
        )
        return [row["m"].value[len(prefix):] for row in rows if row["m"].value.startswith(prefix)]

    def agents(self) -> list[str]:
        prefix = self.vocab.graph_prefix()
        return sorted(
            g.value[len(prefix):]
            for g in self._store.named_graphs()
            if isinstance(g, NamedNode) and g.value.startswith(prefix)
        )
