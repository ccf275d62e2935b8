"""The RDF vocabulary: IRIs and typed terms for agents and memories (DESIGN.md section 3).

Every term Cortex writes is built here with pyoxigraph's term constructors; user text only ever becomes a
:class:`pyoxigraph.Literal`. Memory ids are recovered from IRIs by stripping a known prefix, never by
splitting on ``:``.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from pyoxigraph import Literal, NamedNode

from cortex.errors import InvalidInputError

DEFAULT_NS = "urn:cortex"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
XSD_DOUBLE = NamedNode(XSD + "double")
XSD_INTEGER = NamedNode(XSD + "integer")
XSD_DATETIME = NamedNode(XSD + "dateTime")

_ABSOLUTE_IRI_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*")

#: Memory fields stored as predicates ``{ns}:agentmem:{field}``.
FIELDS = ("content", "type", "project", "confidence", "usageCount", "createdAt", "lastUsedAt")


class Vocabulary:
    """IRIs of one namespace. ``ns`` must be an absolute IRI prefix such as ``urn:cortex``."""

    def __init__(self, ns: str = DEFAULT_NS) -> None:
        if not isinstance(ns, str) or not _ABSOLUTE_IRI_PREFIX.fullmatch(ns) or ns.endswith(":"):
            raise InvalidInputError("ns", f"must be an absolute IRI prefix such as 'urn:cortex', not {ns!r}")
        self.ns = ns
        self.memory_class = NamedNode(f"{ns}:agentmem:Memory")
        self.agent_pred = NamedNode(f"{ns}:agentmem:agent")
        self.pred = {field: NamedNode(f"{ns}:agentmem:{field}") for field in FIELDS}
        self._field_of = {node.value: field for field, node in self.pred.items()}
        self._nodes: dict[tuple[str, str], NamedNode] = {}

    def agent(self, name: str) -> NamedNode:
        """The agent's IRI ``{ns}:agent:{name}``."""
        return self._cached("agent", name, f"{self.ns}:agent:{name}")

    def graph(self, name: str) -> NamedNode:
        """The named graph holding the agent's memories ``{ns}:graph:agent:{name}``."""
        return self._cached("graph", name, f"{self.ns}:graph:agent:{name}")

    def _cached(self, kind: str, name: str, iri: str) -> NamedNode:
        node = self._nodes.get((kind, name))
        if node is None:
            node = self._nodes[(kind, name)] = NamedNode(iri)
        return node

    def memory_prefix(self, name: str) -> str:
        """The IRI prefix of the agent's memories; a memory IRI is this plus its id."""
        return f"{self.ns}:agent:{name}:memory:"

    def memory(self, name: str, memory_id: str) -> NamedNode:
        """The memory's IRI ``{ns}:agent:{name}:memory:{id}``."""
        return NamedNode(self.memory_prefix(name) + memory_id)

    def graph_prefix(self) -> str:
        """The prefix shared by all agent graphs."""
        return f"{self.ns}:graph:agent:"

    def field_of(self, predicate: NamedNode) -> str | None:
        """The memory field a predicate stores, or None."""
        return self._field_of.get(predicate.value)


def string(value: str) -> Literal:
    """A plain string literal."""
    return Literal(value)


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
