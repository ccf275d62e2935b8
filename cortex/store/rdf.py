"""How a memory is written as RDF, shared by every backend: the field table, quads out, memories in, and
the few SPARQL texts the backends send.

A memory is one subject (``{ns}:agent:{name}:memory:{id}`` for an agent's own memories) in its scope's named
graph, with ``rdf:type {ns}:agentmem:Memory``, ``{ns}:agentmem:agent`` (the agent IRI) and one triple per
field. Reading is tolerant: only ``content`` is required, every other field falls back to its default when
its triple is missing (so fields added later never break stores written earlier); a value that is present but
malformed makes the subject unreadable (it is not Cortex's) rather than silently changed.

Every write also records a *change* in the log graph ``{ns}:graph:log``, in the same atomic operation: a
subject ``{ns}:log:{scope}:{seq}`` with ``{ns}:agentmem:scope`` (the scope's graph), ``{ns}:agentmem:seq`` (1, 2,
3... per scope) and one ``{ns}:agentmem:changed`` (the id, a string) per memory it touched (or ``{ns}:agentmem:bulk true`` for a
write of more than :data:`MAX_LOGGED_IDS`). The derived indexes use the sequence to know exactly what changed
since they were saved, whatever happened to the files beside the store (see :mod:`cortex.index.manager`).

SPARQL texts built here contain only IRIs and literals that pyoxigraph serialises (``str(term)``: escaping
done by the library) and ids validated against ``[A-Za-z0-9_-]+``; user text never becomes SPARQL syntax.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from cortex import config
from cortex.model import Memory, MemoryType, Scope
from cortex.vocab import RDF_TYPE, Vocabulary, date_time, double, integer, parse_date_time

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: A write that changes more memories than this logs ``bulk true`` instead of every id.
MAX_LOGGED_IDS = 10_000
TRUE = Literal("true", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#boolean"))


@dataclass(frozen=True)
class Field:
    """One memory field stored as ``{ns}:agentmem:{predicate}``."""

    attr: str
    predicate: str
    encode: Callable[[Any], Literal]
    decode: Callable[[str], Any]
    #: The value when the triple is missing, from the fields read so far; None: the field is required.
    default: Callable[[dict[str, Any]], Any] | None


def _type(text: str) -> MemoryType:
    return MemoryType(text)


#: Every stored field, in write order. ``created_at`` precedes ``last_used_at`` (its default).
FIELDS: tuple[Field, ...] = (
    Field("content", "content", Literal, str, None),
    Field("type", "type", lambda t: Literal(t.value), _type, lambda f: MemoryType(config.DEFAULT_TYPE)),
    Field("project", "project", Literal, str, lambda f: config.DEFAULT_PROJECT),
    Field("confidence", "confidence", double, float, lambda f: config.DEFAULT_CONFIDENCE),
    Field("usage_count", "usageCount", integer, int, lambda f: 0),
    Field("created_at", "createdAt", date_time, parse_date_time, lambda f: f.get("last_used_at", _EPOCH)),
    Field("last_used_at", "lastUsedAt", date_time, parse_date_time, lambda f: f["created_at"]),
)


class MemoryCodec:
    """Memories to quads and back, for one vocabulary."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.fields = [(f, vocab.predicate(f.predicate)) for f in FIELDS]
        self._by_predicate = {node.value: f for f, node in self.fields}
        self.agent_predicate = vocab.predicate("agent")
        self.log_graph = NamedNode(f"{vocab.ns}:graph:log")
        self.p_scope, self.p_seq = vocab.predicate("scope"), vocab.predicate("seq")
        self.p_changed, self.p_bulk = vocab.predicate("changed"), vocab.predicate("bulk")
        self.p_token = vocab.predicate("token")

    def quads(self, scope: Scope, memory: Memory, cache: dict[Any, Literal] | None = None) -> list[Quad]:
        """Every quad of ``memory`` in ``scope``'s graph. ``cache`` memoises the literals a batch repeats
        (type, project, confidence, counts, timestamps)."""
        v = self.vocab
        graph = v.graph(scope)
        subject = v.memory(scope, memory.id)
        out = [
            Quad(subject, RDF_TYPE, v.memory_class, graph),
            Quad(subject, self.agent_predicate, v.agent(memory.agent), graph),
        ]
        for f, predicate in self.fields:
            value = getattr(memory, f.attr)
            if f.attr == "content" or cache is None:
                literal = f.encode(value)
            else:
                key = (f.attr, value)
                cached = cache.get(key)
                literal = cached if cached is not None else cache.setdefault(key, f.encode(value))
            out.append(Quad(subject, predicate, literal, graph))
        return out

    def decode(self, scope: Scope, memory_id: str, pairs: Iterable[tuple[str, str]]) -> Memory | None:
        """The memory from its (predicate IRI, object lexical value) pairs, or None when it is not a
        readable Cortex memory (no content, or a malformed value)."""
        raw: dict[str, str] = {}
        for predicate, value in pairs:
            f = self._by_predicate.get(predicate)
            if f is not None:
                raw[f.attr] = value
        if "content" not in raw:
            return None
        values: dict[str, Any] = {}
        try:
            for f, _ in self.fields:
                text = raw.get(f.attr)
                if text is not None:
                    values[f.attr] = f.decode(text)
            for f, _ in self.fields:
                if f.attr not in values:
                    assert f.default is not None
                    values[f.attr] = f.default(values)
        except (ValueError, OverflowError):
            return None  # not written by Cortex; an index rebuild must not fail on foreign data
        # model_construct: the values come from our own typed literals, converted right here
        return Memory.model_construct(id=memory_id, agent=scope.name, **values)

    # -- the change log --------------------------------------------------------------------------

    def change_quads(self, scope: Scope, seq: int, token: str, memory_ids: Sequence[str]) -> list[Quad]:
        """The log record of write number ``seq`` of ``scope``, which changed ``memory_ids``."""
        record = NamedNode(f"{self.vocab.ns}:log:{scope.key}:{seq}")
        g = self.log_graph
        out = [Quad(record, self.p_scope, self.vocab.graph(scope), g), Quad(record, self.p_seq, integer(seq), g),
               Quad(record, self.p_token, Literal(token), g)]
        if len(memory_ids) > MAX_LOGGED_IDS:
            out.append(Quad(record, self.p_bulk, TRUE, g))
        else:
            # ids as plain strings: the log is bookkeeping, not a graph edge to a memory that may be forgotten
            out.extend(Quad(record, self.p_changed, Literal(i), g) for i in memory_ids)
        return out

    def change_data(self, scope: Scope, seq: int, token: str, memory_ids: Sequence[str]) -> str:
        """The log record as an ``INSERT DATA`` operation, to append to the update that makes the change."""
        quads = self.change_quads(scope, seq, token, memory_ids)
        triples = " ".join(f"{q.subject} {q.predicate} {q.object} ." for q in quads)
        return f"INSERT DATA {{ GRAPH {self.log_graph} {{ {triples} }} }}"

    def last_change_query(self, scope: Scope) -> str:
        """The scope's latest logged change: ``?s`` and ``?t`` (no row when nothing is logged)."""
        return (f"SELECT ?s ?t WHERE {{ GRAPH {self.log_graph} {{ ?r {self.p_scope} {self.vocab.graph(scope)} ; "
                f"{self.p_seq} ?s ; {self.p_token} ?t }} }} ORDER BY DESC(?s) LIMIT 1")

    def change_query(self, scope: Scope, seq: int) -> str:
        """The token ``?t`` of the scope's change number ``seq``."""
        return (f"SELECT ?t WHERE {{ GRAPH {self.log_graph} {{ ?r {self.p_scope} {self.vocab.graph(scope)} ; "
                f"{self.p_seq} {integer(seq)} ; {self.p_token} ?t }} }}")

    def changes_query(self, scope: Scope, after: int) -> str:
        """Every logged change of the scope after ``after``: ``?s``, ``?t`` with ``?m`` (a changed memory) or
        ``?b``."""
        return (f"SELECT ?s ?t ?m ?b WHERE {{ GRAPH {self.log_graph} {{ ?r {self.p_scope} {self.vocab.graph(scope)} ; "
                f"{self.p_seq} ?s ; {self.p_token} ?t . FILTER(?s > {int(after)}) OPTIONAL {{ ?r {self.p_changed} ?m }} "
                f"OPTIONAL {{ ?r {self.p_bulk} ?b }} }} }}")

    def compact_update(self, scope: Scope, below: int) -> str:
        """Drop the scope's log records numbered below ``below`` (the latest one always stays)."""
        return (f"DELETE {{ GRAPH {self.log_graph} {{ ?r ?p ?o }} }} WHERE {{ GRAPH {self.log_graph} {{ "
                f"?r {self.p_scope} {self.vocab.graph(scope)} ; {self.p_seq} ?s . FILTER(?s < {int(below)}) "
                f"?r ?p ?o }} }}")

    # -- SPARQL texts ----------------------------------------------------------------------------

    def _values(self, scope: Scope, memory_ids: Sequence[str]) -> str:
        return " ".join(str(self.vocab.memory(scope, i)) for i in memory_ids)

    def touch_update(self, scope: Scope, memory_ids: Sequence[str], now: datetime) -> str:
        """``usageCount + 1`` and ``lastUsedAt = now`` for each memory, in one operation.

        ``FILTER(BOUND(?n))``: when the increment cannot be computed (a malformed or overflowing count) the
        solution is dropped, so the update never deletes without inserting."""
        g = self.vocab.graph(scope)
        uc, lu = self.vocab.predicate("usageCount"), self.vocab.predicate("lastUsedAt")
        return (
            f"DELETE {{ GRAPH {g} {{ ?m {uc} ?u . ?m {lu} ?l }} }} "
            f"INSERT {{ GRAPH {g} {{ ?m {uc} ?n . ?m {lu} {date_time(now)} }} }} "
            f"WHERE {{ VALUES ?m {{ {self._values(scope, memory_ids)} }} "
            f"GRAPH {g} {{ ?m {uc} ?u . ?m {lu} ?l }} BIND(?u + 1 AS ?n) FILTER(BOUND(?n)) }}"
        )

    def delete_update(self, scope: Scope, memory_ids: Sequence[str]) -> str:
        """Remove every triple of the memories, in one operation."""
        g = self.vocab.graph(scope)
        return (
            f"DELETE {{ GRAPH {g} {{ ?m ?p ?o }} }} "
            f"WHERE {{ VALUES ?m {{ {self._values(scope, memory_ids)} }} GRAPH {g} {{ ?m ?p ?o }} }}"
        )

    def count_query(self, scope: Scope) -> str:
        """How many memory subjects the scope's graph holds (``?n``)."""
        return (
            f"SELECT (COUNT(?m) AS ?n) WHERE {{ GRAPH {self.vocab.graph(scope)} "
            f"{{ ?m {RDF_TYPE} {self.vocab.memory_class} }} }}"
        )
