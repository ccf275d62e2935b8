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

import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad, Triple

from cortex import config, jsonsafe
from cortex.errors import InvalidInputError
from cortex.model import Memory, MemoryType, Scope, Source
from cortex.provenance import Activity
from cortex.store.base import Change
from cortex.validation import AGENT_NAME_RE, MAX_METADATA_BYTES, check_metadata, check_project, check_reason
from cortex.vocab import RDF_TYPE, Vocabulary, date_time, double, integer, parse_date_time

log = logging.getLogger("cortex.store")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: A write that changes more memories than this logs ``bulk true`` instead of every id.
MAX_LOGGED_IDS = 10_000
TRUE = Literal("true", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#boolean"))


PROV = "http://www.w3.org/ns/prov#"
DCTERMS = "http://purl.org/dc/terms/"
RDF_JSON = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
#: Sentinel of optional fields: written only when the memory's value differs from it.
_UNSET: Any = object()


@dataclass(frozen=True)
class Field:
    """One single-valued memory field, stored as ``{ns}:agentmem:{predicate}`` (or a standard term's IRI)."""

    attr: str
    predicate: str
    encode: Callable[[Any], Literal | NamedNode]
    decode: Callable[[str], Any]
    #: The value when the triple is missing, from the fields read so far; None: the field is required.
    default: Callable[[dict[str, Any]], Any] | None
    #: Optional fields are written only when the value is not this (so a plain memory keeps 9 triples).
    skip: Any = _UNSET


def _type(text: str) -> MemoryType:
    return MemoryType(text)


def _project(text: str) -> str:
    return check_project(text)  # InvalidInputError is a ValueError: the memory is unreadable


def _reason(text: str) -> str:
    return check_reason(text, "superseded_reason")


def _confidence(text: str) -> float:
    value = float(text)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"confidence {text!r} is not between 0 and 1")
    return value


def _metadata(value: dict[str, Any]) -> Literal:
    return Literal(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True), datatype=RDF_JSON)


def _parse_metadata(text: str) -> dict[str, Any]:
    """Stored metadata, held to the bounds of a write (a value no write accepts makes the memory unreadable:
    skipped by reads, reported by ``validate-store``, never an error of a read of other memories)."""
    if len(text) > 4 * MAX_METADATA_BYTES:
        raise ValueError("metadata is larger than any write accepts")
    try:
        value = jsonsafe.loads(text)
    except RecursionError:
        raise ValueError("metadata is nested too deeply") from None
    checked = check_metadata(value)  # InvalidInputError is a ValueError
    return checked or {}


#: Every single-valued field, in write order (``created_at`` precedes ``last_used_at``, its default). Tags are
#: multi-valued (one ``{ns}:agentmem:tag`` triple each); ``superseded_by`` is an IRI (``dcterms:isReplacedBy``).
FIELDS: tuple[Field, ...] = (
    Field("content", "content", Literal, str, None),
    Field("type", "type", lambda t: Literal(t.value), _type, lambda f: MemoryType(config.DEFAULT_TYPE)),
    Field("project", "project", Literal, _project, lambda f: config.DEFAULT_PROJECT),
    Field("confidence", "confidence", double, _confidence, lambda f: config.DEFAULT_CONFIDENCE),
    Field("usage_count", "usageCount", integer, int, lambda f: 0),
    Field("created_at", "createdAt", date_time, parse_date_time, lambda f: f.get("last_used_at", _EPOCH)),
    Field("last_used_at", "lastUsedAt", date_time, parse_date_time, lambda f: f["created_at"]),
    Field("source", "source", lambda s: Literal(s.value), Source, lambda f: Source.MANUAL, Source.MANUAL),
    Field("expires_at", "expiresAt", date_time, parse_date_time, lambda f: None, None),
    Field("metadata", "metadata", _metadata, _parse_metadata, lambda f: None, None),
    Field("version", "version", integer, int, lambda f: 1, 1),
    Field("updated_at", "updatedAt", date_time, parse_date_time, lambda f: f["created_at"], None),
    Field("validated_at", "validatedAt", date_time, parse_date_time, lambda f: None, None),
    Field("valid_from", "validFrom", date_time, parse_date_time, lambda f: f["created_at"], None),
    Field("valid_until", PROV + "invalidatedAtTime", date_time, parse_date_time, lambda f: None, None),
    Field("superseded_reason", "supersededReason", Literal, _reason, lambda f: None, None),
    Field("used_count", "usedCount", integer, int, lambda f: 0, 0),
)
#: Fields a version resource keeps (what ``update`` can change, and when it changed).
VERSION_FIELDS = ("content", "type", "project", "confidence", "metadata", "version", "updated_at", "created_at",
                  "source", "expires_at", "validated_at", "valid_from")


def sparql_term(term: Any) -> str:
    """A term as SPARQL text, serialised by pyoxigraph; an RDF 1.2 triple term as ``<<( s p o )>>`` (its
    ``str`` is the bare triple, which SPARQL does not take)."""
    if isinstance(term, Triple):
        return f"<<( {sparql_term(term.subject)} {term.predicate} {sparql_term(term.object)} )>>"
    return str(term)


class MemoryCodec:
    """Memories to quads and back, for one vocabulary."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.fields = [(f, NamedNode(f.predicate) if f.predicate.startswith("http") else vocab.predicate(f.predicate))
                       for f in FIELDS]
        self._by_predicate = {node.value: f for f, node in self.fields}
        self.agent_predicate = vocab.predicate("agent")
        self.p_tag = vocab.predicate("tag")
        self.p_replaced_by = NamedNode(DCTERMS + "isReplacedBy")
        self.p_version_of = NamedNode(DCTERMS + "isVersionOf")
        self.p_revision_of = NamedNode(PROV + "wasRevisionOf")
        self.p_attributed = NamedNode(PROV + "wasAttributedTo")
        self.version_class = vocab.predicate("MemoryVersion")
        self.p_version = vocab.predicate("version")
        self.log_graph = NamedNode(f"{vocab.ns}:graph:log")
        self.p_scope, self.p_seq = vocab.predicate("scope"), vocab.predicate("seq")
        self.p_changed, self.p_bulk = vocab.predicate("changed"), vocab.predicate("bulk")
        self.p_token = vocab.predicate("token")
        self.p_latest = vocab.predicate("latest")
        self.p_after = vocab.predicate("after")
        self.p_used = vocab.predicate("used")
        self.p_generated = NamedNode(PROV + "generated")  # activity -> memory: a memory keeps its own triples
        self.p_derived = NamedNode(PROV + "wasDerivedFrom")
        self.activity_class = NamedNode(PROV + "Activity")
        self.p_started = NamedNode(PROV + "startedAtTime")
        self.p_associated = NamedNode(PROV + "wasAssociatedWith")
        self.activity_fields = {name: vocab.predicate(name) for name in ("surface", "event", "session", "tool",
                                                                          "channel", "file", "part", "model", "run")}
        self.p_action = vocab.predicate("action")
        self.p_rule = vocab.predicate("rule")  # the rule an automatic deletion applied
        self.p_invalidated = NamedNode(PROV + "invalidated")  # a deleting activity -> each memory it deleted
        #: an activity that only deleted memories (a prune): a PROV activity with a shape of its own
        self.deletion_class = vocab.predicate("Deletion")
        self.p_dropping = vocab.predicate("dropping")  # an activity whose memories a delete is dropping
        #: what an imported memory is about (an entity node of its graph: an MCP memory server's observation)
        self.p_about = vocab.predicate("about")
        #: Links a replacement of a memory keeps (they are not fields of the memory): its uses, what it was
        #: derived from (the activity that generated it links to it: not a triple of the memory) and what it is about.
        self.kept = frozenset({self.p_used, self.p_derived, self.p_about})
        self._unreadable: set[tuple[Scope, str]] = set()  # memories already reported as unreadable
        #: Every predicate IRI Cortex writes on a memory (fields, tags, links).
        self.known = frozenset({RDF_TYPE.value, self.agent_predicate.value, self.p_tag.value, self.p_replaced_by.value,
                                self.p_revision_of.value, self.p_attributed.value, self.p_used.value,
                                self.p_derived.value, self.p_about.value, *(node.value for _, node in self.fields)})

    def version_iri(self, scope: Scope, memory_id: str, version: int) -> NamedNode:
        """The resource keeping version ``version`` of a memory once it was updated."""
        return NamedNode(f"{self.vocab.ns}:version:{scope.key}:{memory_id}:{int(version)}")

    def _field_quads(self, subject: NamedNode, graph: NamedNode, memory: Memory, attrs: Iterable[str] | None,
                     cache: dict[Any, Any] | None) -> list[Quad]:
        out = []
        wanted = set(attrs) if attrs is not None else None
        for f, predicate in self.fields:
            if wanted is not None and f.attr not in wanted:
                continue
            value = getattr(memory, f.attr)
            if f.skip is not _UNSET and value == f.skip:
                continue
            if f.attr in ("valid_from", "updated_at") and value == memory.created_at:
                continue  # the default: valid from its creation, not updated since
            if f.attr in ("content", "metadata") or cache is None:
                literal = f.encode(value)
            else:
                key = (f.attr, value)
                cached = cache.get(key)
                literal = cached if cached is not None else cache.setdefault(key, f.encode(value))
            out.append(Quad(subject, predicate, literal, graph))
        out.extend(Quad(subject, self.p_tag, Literal(tag), graph) for tag in memory.tags)
        return out

    def quads(self, scope: Scope, memory: Memory, cache: dict[Any, Any] | None = None) -> list[Quad]:
        """Every quad of ``memory`` in ``scope``'s graph. ``cache`` memoises the literals a batch repeats
        (type, project, confidence, counts, timestamps)."""
        v = self.vocab
        graph = v.graph(scope)
        subject = v.memory(scope, memory.id)
        out = [
            Quad(subject, RDF_TYPE, v.memory_class, graph),
            Quad(subject, self.agent_predicate, v.agent(memory.agent or memory.author or ""), graph),
            *self._field_quads(subject, graph, memory, None, cache),
        ]
        if memory.author is not None and memory.agent and memory.author != memory.agent:
            out.append(Quad(subject, self.p_attributed, v.agent(memory.author), graph))  # e.g. a lead's injection
        if memory.superseded_by is not None:
            out.append(Quad(subject, self.p_replaced_by, v.memory(scope, memory.superseded_by), graph))
        if memory.version > 1:
            out.append(Quad(subject, self.p_revision_of, self.version_iri(scope, memory.id, memory.version - 1),
                            graph))
        return out

    def version_quads(self, scope: Scope, old: Memory) -> list[Quad]:
        """The resource keeping ``old`` (a memory about to be updated) as version ``old.version``."""
        graph = self.vocab.graph(scope)
        subject = self.version_iri(scope, old.id, old.version)
        out = [
            Quad(subject, RDF_TYPE, self.version_class, graph),
            Quad(subject, self.p_version_of, self.vocab.memory(scope, old.id), graph),
            Quad(subject, self.agent_predicate, self.vocab.agent(old.agent or old.author or ""), graph),
            *self._field_quads(subject, graph, old, VERSION_FIELDS, None),
        ]
        if old.author is not None and old.agent and old.author != old.agent:
            out.append(Quad(subject, self.p_attributed, self.vocab.agent(old.author), graph))
        if old.version == 1:
            out.append(Quad(subject, self.p_version, integer(1), graph))  # skipped as the default elsewhere
        else:
            out.append(Quad(subject, self.p_revision_of, self.version_iri(scope, old.id, old.version - 1), graph))
        return out

    def decode(self, scope: Scope, memory_id: str, pairs: Iterable[tuple[str, str]],
               counted_uses: tuple[int, str] | None = None, errors: list[str] | None = None) -> Memory | None:
        """The memory from its (predicate IRI, object lexical value) pairs, or None when it is not a
        readable Cortex memory (no content, or a malformed value). ``counted_uses``: its use triples counted by
        the server (how many, the latest), when ``pairs`` leaves them out. ``errors``: where to say why a memory
        is unreadable (else a read logs it, once)."""
        raw: dict[str, str] = {}
        tags: list[str] = []
        author = attributed = replaced_by = None
        uses: list[str] = []
        for predicate, value in pairs:
            f = self._by_predicate.get(predicate)
            if f is not None:
                raw[f.attr] = value
            elif predicate == self.p_tag.value:
                tags.append(value)
            elif predicate == self.agent_predicate.value:
                author = value
            elif predicate == self.p_attributed.value:
                attributed = value
            elif predicate == self.p_replaced_by.value:
                replaced_by = value
            elif predicate == self.p_used.value:
                uses.append(value)
        if "content" not in raw:
            return None
        values: dict[str, Any] = {}
        try:
            for f, _ in self.fields:
                text = raw.get(f.attr)
                if text is not None:
                    try:
                        values[f.attr] = f.decode(text)
                    except (ValueError, OverflowError) as exc:
                        reason = exc.reason if isinstance(exc, InvalidInputError) else str(exc)
                        raise ValueError(f"{f.attr}: {reason}") from None
            for f, _ in self.fields:
                if f.attr not in values:
                    assert f.default is not None
                    values[f.attr] = f.default(values)
            if counted_uses is not None and counted_uses[0]:
                uses.append(counted_uses[1])
            if uses:  # uses logged one triple each by a store shared by several writers (see use_literal)
                values["usage_count"] += len(uses) - 1 + counted_uses[0] if counted_uses is not None \
                    and counted_uses[0] else len(uses)
                values["last_used_at"] = max(values["last_used_at"], *(parse_date_time(u.split(" ", 1)[0])
                                                                       for u in uses))
            agent_prefix = f"{self.vocab.ns}:agent:"
            owner = author[len(agent_prefix):] if author is not None and author.startswith(agent_prefix) else None
            writer = attributed[len(agent_prefix):] if attributed is not None \
                and attributed.startswith(agent_prefix) else owner
            for name in (owner, writer):  # a name no surface accepts: nobody could change or forget it
                if name is not None and not AGENT_NAME_RE.fullmatch(name):
                    raise ValueError(f"agent: {name[:80]!r} is not an agent name")
        except (ValueError, OverflowError) as exc:
            # not written by Cortex (or beyond what any write accepts): reads skip it, never fail on it
            if errors is not None:
                errors.append(str(exc))
            elif (scope, memory_id) not in self._unreadable and len(self._unreadable) < 10_000:
                self._unreadable.add((scope, memory_id))
                log.warning("%s: memory %s is unreadable (%s): reads leave it out; cortex validate-store reports it",
                            scope.label, memory_id, str(exc)[:200])
            return None
        if replaced_by is not None:
            values["superseded_by"] = self.vocab.memory_id(scope, replaced_by)
        values.setdefault("superseded_by", None)
        # trusted: every field, each value from our own typed literals, converted right here
        return Memory.trusted(dict(
            id=memory_id, agent=scope.name if scope.kind == "agent" else (writer or ""), tags=tuple(sorted(tags)),
            scope=scope.relative, author=writer if writer is not None else (scope.name or None), origin="cortex",
            **values))

    # -- provenance (PROV-O) -----------------------------------------------------------------------

    def activity_iri(self, scope: Scope, token: str) -> NamedNode:
        """The activity of one write in ``scope`` (a random token: one per write)."""
        return NamedNode(f"{self.vocab.ns}:activity:{scope.key}:{token}")

    def activity_quads(self, scope: Scope, activity: Activity, token: str, memories: Sequence[Memory]) -> list[Quad]:
        """The write's activity (``prov:Activity`` with its surface, hook event, session and tool) and
        ``prov:generated`` (the inverse of ``prov:wasGeneratedBy``) to each new memory. When it happened and
        for which agent are its memories' ``createdAt`` and ``agent``: not repeated (a single store stays
        within a few percent of its cost without provenance)."""
        if not memories:
            return []
        g, node = self.vocab.prov_graph(scope), self.activity_iri(scope, token)
        out = self._activity_node(scope, activity, token)
        out.extend(Quad(node, self.p_generated, self.vocab.memory(scope, m.id), g) for m in memories)
        return out

    def _activity_node(self, scope: Scope, activity: Activity, token: str, cls: NamedNode | None = None) -> list[Quad]:
        """The activity's own triples: its class, surface, event, session, tool and, for a change, what, by whom,
        when and by which rule."""
        g, node = self.vocab.prov_graph(scope), self.activity_iri(scope, token)
        out = [Quad(node, RDF_TYPE, cls or self.activity_class, g)]
        for name, predicate in self.activity_fields.items():
            value = getattr(activity, name)
            if value is not None:
                out.append(Quad(node, predicate, Literal(value), g))
        if activity.action is not None:  # a change of existing memories: what, by whom, when
            out.append(Quad(node, self.p_action, Literal(activity.action), g))
            if activity.agent is not None:
                out.append(Quad(node, self.p_associated, self.vocab.agent(activity.agent), g))
            if activity.at is not None:
                out.append(Quad(node, self.p_started, date_time(activity.at), g))
            if activity.rule is not None:
                out.append(Quad(node, self.p_rule, Literal(activity.rule), g))
        return out

    def write_activity_quads(self, scope: Scope, activity: Activity | None, adds: Sequence[Memory],
                             changed: Sequence[Memory], deleted: Sequence[str] = ()) -> list[Quad]:
        """The provenance of one write: an activity that generated ``adds`` (as for a store), and, when the
        write changed existing memories (``activity.action``), an activity of its own that generated their new
        state, naming what it did, the agent that did it and when; when it also deleted memories (a prune),
        that activity ``prov:invalidated`` each of them (kept after they are gone: nothing goes unrecorded)."""
        if activity is None:
            return []
        created = replace(activity, action=None, agent=None, at=None, rule=None)
        # a consolidation run's memories are generated by the run's own activity (its record: cortex.consolidation)
        out = self.activity_quads(scope, created, f"{activity.run}-create" if activity.run else os.urandom(8).hex(),
                                  adds)
        if activity.action is not None:
            token = f"{activity.run}-{activity.action}" if activity.run else os.urandom(8).hex()
            out += self.activity_quads(scope, activity, token, changed)
            if deleted:
                if not changed:  # the activity's own triples, which activity_quads writes only with memories
                    out += self._activity_node(scope, activity, token, self.deletion_class)
                node, g = self.activity_iri(scope, token), self.vocab.prov_graph(scope)
                out += [Quad(node, self.p_invalidated, self.vocab.memory(scope, i), g) for i in deleted]
        return out

    def derived_quads(self, scope: Scope, derived: Sequence[tuple[str, str]]) -> list[Quad]:
        """``prov:wasDerivedFrom`` for each (memory, the memory it was derived from) of the scope."""
        g = self.vocab.graph(scope)
        return [Quad(self.vocab.memory(scope, new), self.p_derived, self.vocab.memory(scope, old), g)
                for new, old in derived]

    def provenance_query(self, scope: Scope, memory_id: str) -> str:
        """The activities that generated the memory or changed it (``?a`` with each ``?p ?o``) and what it was
        derived from (``?d``)."""
        g, pg, m = self.vocab.graph(scope), self.vocab.prov_graph(scope), self.vocab.memory(scope, memory_id)
        return (f"SELECT ?a ?p ?o ?d WHERE {{ {{ GRAPH {pg} {{ ?a {self.p_generated} {m} . ?a ?p ?o }} }} UNION "
                f"{{ GRAPH {g} {{ {m} {self.p_derived} ?d }} }} }}")

    @staticmethod
    def use_literal(now: datetime, token: str) -> Literal:
        """One use of a memory as its own triple (``{ns}:agentmem:used "<time> <token>"``): what a store
        shared by several writers records instead of rewriting ``usageCount``, since SPARQL servers such as
        Oxigraph do not serialise read-modify-write updates; readers add the uses to the stored count."""
        # always with microseconds, so that the latest use is also the greatest string (a server's MAX)
        return Literal(f"{now.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')} {token}")

    # -- the change log --------------------------------------------------------------------------

    def change_quads(self, scope: Scope, seq: int, token: str, memory_ids: Sequence[str],
                     shared: bool = False) -> list[Quad]:
        """The log record of write number ``seq`` of ``scope``, which changed ``memory_ids``. On a ``shared``
        store two writers may draw the same number: the record is named by its token."""
        g = self.log_graph
        record = self.record_iri(scope, token if shared else str(seq))
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

    def changes_query(self, scope: Scope, after: int, upto: int | None = None) -> str:
        """Every triple (``?r ?p ?o``, numbered ``?s``) of the scope's log records after ``after`` (up to
        ``upto``: then looked up number by number, which servers answer from an index instead of scanning the
        log); read by :meth:`read_changes`. One plain pattern: OPTIONALs here made Oxigraph 500x slower."""
        numbers = f"{self._numbers(after + 1, upto)} " if upto is not None else ""
        window = "" if upto is not None else f"FILTER(?s > {int(after)}) "
        return (f"SELECT ?r ?s ?p ?o WHERE {{ {numbers}GRAPH {self.log_graph} {{ ?r {self.p_seq} ?s ; "
                f"{self.p_scope} {self.vocab.graph(scope)} ; ?p ?o . {window}}} }}")

    def read_changes(self, rows: Iterable[tuple[str, str, str, str]]) -> list[Change]:
        """The changes in the (record, number, predicate, value) rows of :meth:`changes_query`, one per record,
        ordered by number (then token)."""
        records: dict[str, tuple[int, list[str]]] = {}
        tokens: dict[str, str] = {}
        after: dict[str, list[str]] = {}
        bulk: set[str] = set()
        token, changed, p_bulk, p_after = self.p_token.value, self.p_changed.value, self.p_bulk.value, \
            self.p_after.value
        for record, seq, predicate, value in rows:
            ids = records.setdefault(record, (int(seq), []))[1]
            if predicate == changed:
                ids.append(value)
            elif predicate == token:
                tokens[record] = value
            elif predicate == p_bulk:
                bulk.add(record)
            elif predicate == p_after:
                after.setdefault(record, []).append(value)
        found = [Change(seq, tokens.get(r, ""), None if r in bulk else tuple(sorted(ids)),
                        tuple(sorted(after.get(r, ())))) for r, (seq, ids) in records.items()]
        return sorted(found, key=lambda c: (c.seq, c.token))

    @staticmethod
    def _numbers(low: int, high: int) -> str:
        return f"VALUES ?s {{ {' '.join(str(n) for n in range(max(1, int(low)), int(high) + 1))} }}"

    def record_iri(self, scope: Scope, name: str) -> NamedNode:
        """A log record of the scope: named by its number (embedded) or its token (shared)."""
        return NamedNode(f"{self.vocab.ns}:log:{scope.key}:{name}")

    def head_iri(self, scope: Scope) -> NamedNode:
        """Where a shared store keeps the scope's latest changes (``agentmem:latest "<seq> <token>"``)."""
        return self.record_iri(scope, "head")

    def shared_change(self, scope: Scope, seq: int, token: str, memory_ids: Sequence[str],
                      replaced: Sequence[str], per_operation: int = 500) -> list[str]:
        """The log record of a write to a shared store, as update operations, and the scope's head moved on: the
        head values this writer has applied (``replaced``) make way for this change's. A head value is only
        removed by a writer that applied it, so a reader that knows every head value has seen every change
        (two writers racing leave both values). Operations hold at most ``per_operation`` triples (Virtuoso
        refuses long ones)."""
        g, head = self.log_graph, self.head_iri(scope)
        quads = self.change_quads(scope, seq, token, memory_ids, shared=True)
        quads[3:3] = [Quad(quads[0].subject, self.p_after, Literal(v), g) for v in replaced]  # the walk back
        ops = self.insert_data(quads, per_operation)
        if replaced:
            values = ", ".join(str(Literal(v)) for v in replaced)
            ops.append(f"DELETE DATA {{ GRAPH {g} {{ {head} {self.p_latest} {values} }} }}")
        ops.append(f"INSERT DATA {{ GRAPH {g} {{ {head} {self.p_latest} {Literal(f'{seq} {token}')} }} }}")
        return ops

    def heads_query(self, scopes: Sequence[Scope]) -> str:
        """The head values (``?v``: "<seq> <token>") of each scope's head (``?h``)."""
        heads = " ".join(str(self.head_iri(s)) for s in scopes)
        return f"SELECT ?h ?v WHERE {{ VALUES ?h {{ {heads} }} GRAPH {self.log_graph} {{ ?h {self.p_latest} ?v }} }}"

    def records_query(self, scope: Scope, tokens: Sequence[str]) -> str:
        """Every triple (``?r ?p ?o``, numbered ``?s``) of the scope's records with these tokens."""
        records = " ".join(str(self.record_iri(scope, t)) for t in tokens)
        return (f"SELECT ?r ?s ?p ?o WHERE {{ VALUES ?r {{ {records} }} GRAPH {self.log_graph} {{ ?r {self.p_seq} ?s ; "
                f"?p ?o }} }}")

    def compact_update(self, scope: Scope, below: int) -> str:
        """Drop the scope's log records numbered below ``below`` (the latest one always stays)."""
        return (f"DELETE {{ GRAPH {self.log_graph} {{ ?r ?p ?o }} }} WHERE {{ GRAPH {self.log_graph} {{ "
                f"?r {self.p_scope} {self.vocab.graph(scope)} ; {self.p_seq} ?s . FILTER(?s < {int(below)}) "
                f"?r ?p ?o }} }}")

    # -- SPARQL texts ----------------------------------------------------------------------------

    def values(self, scope: Scope, memory_ids: Sequence[str]) -> str:
        """The memories' IRIs as the terms of a ``VALUES`` block."""
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
            f"WHERE {{ VALUES ?m {{ {self.values(scope, memory_ids)} }} "
            f"GRAPH {g} {{ ?m {uc} ?u . ?m {lu} ?l }} BIND(?u + 1 AS ?n) FILTER(BOUND(?n)) }}"
        )

    def delete_update(self, scope: Scope, memory_ids: Sequence[str], per_operation: int | None = None) -> str:
        """Remove every triple of the memories, of their earlier versions and of the activities that generated
        only them, in one update; with ``per_operation``, the memories go that many at a time (SPARQL servers
        fail on a pattern over a thousand of them: Virtuoso's stack, Oxigraph's time), in the same update (each
        operation sees the ones before it, so an activity that generated memories of several chunks goes with
        the last of them)."""
        return " ; ".join(self.delete_operations(scope, memory_ids, per_operation))

    def delete_operations(self, scope: Scope, memory_ids: Sequence[str], per_operation: int | None = None) -> list[str]:
        """:meth:`delete_update` as a list of operations (to send in several requests)."""
        step = per_operation or len(memory_ids) or 1
        return [op for i in range(0, len(memory_ids), step)
                for op in self._delete_operation(scope, memory_ids[i:i + step]).split(" ; ")]

    def _delete_operation(self, scope: Scope, memory_ids: Sequence[str]) -> str:
        # The activities that generated the memories are marked, their links to them dropped, and those left
        # generating nothing deleted: no list of the memories inside a negated pattern (Virtuoso overflowed its
        # stack compiling NOT EXISTS ... NOT IN next to another operation).
        g, pg = self.vocab.graph(scope), self.vocab.prov_graph(scope)
        values = self.values(scope, memory_ids)
        mark, gen = self.p_dropping, self.p_generated
        return (
            f"INSERT {{ GRAPH {pg} {{ ?a {mark} {TRUE} }} }} "
            f"WHERE {{ VALUES ?m {{ {values} }} GRAPH {pg} {{ ?a {gen} ?m }} }} ; "
            f"DELETE {{ GRAPH {pg} {{ ?a {gen} ?m }} }} "
            f"WHERE {{ VALUES ?m {{ {values} }} GRAPH {pg} {{ ?a {gen} ?m }} }} ; "
            f"DELETE {{ GRAPH {pg} {{ ?a ?p ?o }} }} "
            f"WHERE {{ GRAPH {pg} {{ ?a {mark} {TRUE} . ?a ?p ?o FILTER NOT EXISTS {{ ?a {gen} ?x }} }} }} ; "
            f"DELETE {{ GRAPH {pg} {{ ?a {mark} {TRUE} }} }} WHERE {{ GRAPH {pg} {{ ?a {mark} {TRUE} }} }} ; "
            f"DELETE {{ GRAPH {g} {{ ?v ?p ?o }} }} "
            f"WHERE {{ VALUES ?m {{ {values} }} GRAPH {g} {{ ?v {self.p_version_of} ?m . ?v ?p ?o }} }} ; "
            f"DELETE {{ GRAPH {g} {{ ?m ?p ?o }} }} "
            f"WHERE {{ VALUES ?m {{ {values} }} GRAPH {g} {{ ?m ?p ?o }} }}"
        )

    def insert_data(self, quads: Iterable[Quad], per_operation: int | None = None) -> list[str]:
        """``INSERT DATA`` operations adding ``quads``: one per graph (in the order the graphs first appear), each
        of at most ``per_operation`` triples (None: no bound)."""
        by_graph: dict[Any, list[Quad]] = {}
        for q in quads:
            by_graph.setdefault(q.graph_name, []).append(q)
        operations = []
        for graph, group in by_graph.items():
            step = per_operation or len(group)
            operations += [f"INSERT DATA {{ GRAPH {graph} {{ {self.triples(group[i:i + step])} }} }}"
                           for i in range(0, len(group), step)]
        return operations

    def delete_data(self, quads: Iterable[Quad], per_operation: int | None = None) -> list[str]:
        """``DELETE DATA`` operations removing ``quads`` (as :meth:`insert_data` groups them)."""
        return [f"DELETE DATA {op[len('INSERT DATA '):]}" for op in self.insert_data(quads, per_operation)]

    @staticmethod
    def triples(quads: Iterable[Quad]) -> str:
        """Quads as the triples of a ``GRAPH`` block (terms serialised by pyoxigraph)."""
        return " ".join(f"{sparql_term(q.subject)} {q.predicate} {sparql_term(q.object)} ." for q in quads)

    def stored_version(self, quads: Iterable[Quad]) -> int:
        """The version a memory's stored quads say it is at (1 when they do not say)."""
        for q in quads:
            if q.predicate == self.p_version:
                try:
                    return int(q.object.value) if isinstance(q.object, Literal) else -1
                except ValueError:
                    return -1
        return 1

    def versions_query(self, scope: Scope, memory_id: str) -> str:
        """Every triple of the memory's earlier versions: ``?v ?p ?o``."""
        g = self.vocab.graph(scope)
        return (f"SELECT ?v ?p ?o WHERE {{ GRAPH {g} {{ ?v {self.p_version_of} {self.vocab.memory(scope, memory_id)} ."
                f" ?v ?p ?o }} }}")

    def count_query(self, scope: Scope) -> str:
        """How many memory subjects the scope's graph holds (``?n``)."""
        return (
            f"SELECT (COUNT(?m) AS ?n) WHERE {{ GRAPH {self.vocab.graph(scope)} "
            f"{{ ?m {RDF_TYPE} {self.vocab.memory_class} }} }}"
        )
