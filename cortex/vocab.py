"""The RDF vocabulary: IRIs and typed terms for scopes, agents and memories (docs/architecture.md, "RDF model").

Every term Cortex writes is built here with pyoxigraph's term constructors; user text only ever becomes a
:class:`pyoxigraph.Literal`. Memory ids are recovered from IRIs by stripping a known prefix, never by
splitting on ``:``. How a memory's fields map to triples is :mod:`cortex.store.rdf`.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from urllib.parse import quote, unquote

from pyoxigraph import Literal, NamedNode

from cortex.errors import InvalidInputError
from cortex.model import Scope
from cortex.validation import is_memory_id

DEFAULT_NS = "urn:cortex"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
XSD_DOUBLE = NamedNode(XSD + "double")
XSD_INTEGER = NamedNode(XSD + "integer")
XSD_DATETIME = NamedNode(XSD + "dateTime")

_ABSOLUTE_IRI_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*")
_SCOPE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class Vocabulary:
    """IRIs of one namespace. ``ns`` must be an absolute IRI prefix such as ``urn:cortex``."""

    def __init__(self, ns: str = DEFAULT_NS) -> None:
        if not isinstance(ns, str) or not _ABSOLUTE_IRI_PREFIX.fullmatch(ns) or ns.endswith(":"):
            raise InvalidInputError("ns", f"must be an absolute IRI prefix such as 'urn:cortex', not {ns!r}")
        self.ns = ns
        self.memory_class = NamedNode(f"{ns}:agentmem:Memory")
        self._nodes: dict[tuple[str, str], NamedNode] = {}

    def predicate(self, name: str) -> NamedNode:
        """The predicate ``{ns}:agentmem:{name}``."""
        return self._cached("pred", name, f"{self.ns}:agentmem:{name}")

    def agent(self, name: str) -> NamedNode:
        """The agent's IRI ``{ns}:agent:{name}``."""
        return self._cached("agent", name, f"{self.ns}:agent:{name}")

    def graph(self, scope: Scope) -> NamedNode:
        """The named graph holding the scope's memories, e.g. ``{ns}:graph:agent:{name}``."""
        return self._cached("graph", scope.key, f"{self.ns}:graph:{scope.key}")

    def prov_graph(self, scope: Scope) -> NamedNode:
        """The named graph holding the provenance (PROV-O activities) of the scope's writes, e.g.
        ``{ns}:graph:prov:agent:{name}``: beside the memories, so the scope's graph holds memories only."""
        return self._cached("prov", scope.key, f"{self.ns}:graph:prov:{scope.key}")

    def scope_of_prov_graph(self, iri: str) -> Scope | None:
        """The scope whose provenance graph ``iri`` is, or None."""
        prefix = f"{self.ns}:graph:prov:"
        return self.scope_of_graph(f"{self.ns}:graph:{iri[len(prefix):]}") if iri.startswith(prefix) else None

    def _cached(self, kind: str, name: str, iri: str) -> NamedNode:
        node = self._nodes.get((kind, name))
        if node is None:
            node = self._nodes[(kind, name)] = NamedNode(iri)
        return node

    def memory_prefix(self, scope: Scope) -> str:
        """The IRI prefix of the scope's memories; a memory IRI is this plus its id
        (``{ns}:agent:{name}:memory:`` for an agent's own memories)."""
        return f"{self.ns}:{scope.key}:memory:"

    def memory(self, scope: Scope, memory_id: str) -> NamedNode:
        """The memory's IRI, e.g. ``{ns}:agent:{name}:memory:{id}``."""
        return NamedNode(self.memory_prefix(scope) + memory_id)

    def entity_prefix(self, scope: Scope) -> str:
        """The IRI prefix of the scope's entity nodes (what an import from a knowledge graph names, e.g. the MCP
        memory server's entities): ``{ns}:agent:{name}:entity:``; an entity IRI is this plus its percent-encoded
        name."""
        return f"{self.ns}:{scope.key}:entity:"

    def entity(self, scope: Scope, name: str) -> NamedNode:
        """The entity node named ``name`` (any text: percent-encoded, so two names never share a node)."""
        return NamedNode(self.entity_prefix(scope) + quote(name, safe=""))

    def relation(self, relation_type: str) -> NamedNode:
        """The predicate of a relation type between entities: ``{ns}:agentmem:rel:{percent-encoded type}``
        (``works at`` is ``rel:works%20at``)."""
        return self._cached("rel", relation_type, f"{self.ns}:agentmem:rel:{quote(relation_type, safe='')}")

    def relation_type(self, iri: str) -> str | None:
        """The relation type a relation predicate names, or None when ``iri`` is not one."""
        prefix = f"{self.ns}:agentmem:rel:"
        return unquote(iri[len(prefix):]) if iri.startswith(prefix) and len(iri) > len(prefix) else None

    def memory_id(self, scope: Scope, iri: str) -> str | None:
        """The id in a memory IRI of ``scope``, or None when the IRI is not one (or its id is not a memory id:
        ``[A-Za-z0-9_-]{1,128}``)."""
        prefix = self.memory_prefix(scope)
        if not iri.startswith(prefix):
            return None
        found = iri[len(prefix):]
        return found if is_memory_id(found) else None  # the same rule as every surface's (a get must find it)

    def scope_of_graph(self, iri: str) -> Scope | None:
        """The scope whose graph ``iri`` is, or None for a graph Cortex does not own."""
        prefix = f"{self.ns}:graph:"
        if not iri.startswith(prefix):
            return None
        kind, _, name = iri[len(prefix):].partition(":")
        if kind in ("agent", "team") and _SCOPE_NAME.fullmatch(name):
            return Scope(kind, name)
        if kind == "swarm" and not name:
            return Scope.swarm()
        return None


def double(value: float) -> Literal:
    """An ``xsd:double`` literal."""
    return Literal(repr(float(value)), datatype=XSD_DOUBLE)


def integer(value: int) -> Literal:
    """An ``xsd:integer`` literal."""
    return Literal(str(int(value)), datatype=XSD_INTEGER)


def date_time(value: datetime) -> Literal:
    """An ``xsd:dateTime`` literal in UTC with a ``Z`` suffix."""
    text = value.astimezone(timezone.utc).replace(tzinfo=None).isoformat() + "Z"
    return Literal(text, datatype=XSD_DATETIME)


def parse_date_time(text: str) -> datetime:
    """Parse an ``xsd:dateTime`` lexical value into an aware UTC datetime."""
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)
