"""What a SPARQL query answers, and its limits: rows, time-out and formats (docs/sparql.md).

Results are kept as pyoxigraph terms in a :class:`SparqlResult`, serialised on demand: SPARQL JSON, CSV, TSV
and XML for ``SELECT``/``ASK`` (pyoxigraph's writers), Turtle, N-Triples, RDF/XML, JSON-LD, N-Quads and TriG
for ``CONSTRUCT``/``DESCRIBE`` (the triples in the default graph); a remote client rebuilds the same object from the JSON or N-Triples answer.
"""

from __future__ import annotations

import io
import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cortex.errors import InvalidInputError, QueryTimeoutError

#: What ``Cortex.sparql`` returns at most, unless told otherwise (``CORTEX_SPARQL_LIMIT``).
DEFAULT_ROW_LIMIT = 10_000
#: Seconds a query may run, unless told otherwise (``CORTEX_SPARQL_TIMEOUT``).
DEFAULT_TIMEOUT = 30.0

#: Result formats by short name: (media type, kind of result it is for).
FORMATS: dict[str, tuple[str, str]] = {
    "json": ("application/sparql-results+json", "solutions"),
    "xml": ("application/sparql-results+xml", "solutions"),
    "csv": ("text/csv", "solutions"),
    "tsv": ("text/tab-separated-values", "solutions"),
    "turtle": ("text/turtle", "graph"),
    "ntriples": ("application/n-triples", "graph"),
    "rdfxml": ("application/rdf+xml", "graph"),
    "jsonld": ("application/ld+json", "graph"),
    "nquads": ("application/n-quads", "graph"),
    "trig": ("application/trig", "graph"),
}
_RESULT_FORMATS = {"json": ox.QueryResultsFormat.JSON, "xml": ox.QueryResultsFormat.XML,
                   "csv": ox.QueryResultsFormat.CSV, "tsv": ox.QueryResultsFormat.TSV}
_GRAPH_FORMATS = {"turtle": ox.RdfFormat.TURTLE, "ntriples": ox.RdfFormat.N_TRIPLES,
                  "rdfxml": ox.RdfFormat.RDF_XML, "jsonld": ox.RdfFormat.JSON_LD, "nquads": ox.RdfFormat.N_QUADS,
                  "trig": ox.RdfFormat.TRIG}

def configured_limit() -> int:
    """The row limit of the surfaces (``CORTEX_SPARQL_LIMIT``, default 10,000)."""
    return int(_positive("CORTEX_SPARQL_LIMIT", DEFAULT_ROW_LIMIT, int))


def configured_timeout() -> float:
    """The time-out of the surfaces in seconds (``CORTEX_SPARQL_TIMEOUT``, default 30)."""
    return float(_positive("CORTEX_SPARQL_TIMEOUT", DEFAULT_TIMEOUT, float))


def _positive(name: str, default: Any, kind: type) -> Any:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise InvalidInputError(name, f"must be a number, not {raw!r}") from None
    if value <= 0:
        raise InvalidInputError(name, f"must be above 0, not {raw!r}")
    return value


def check_substitutions(substitutions: Any) -> dict[str, Any]:
    """Variable bindings: names (without ``?``) to pyoxigraph terms."""
    if substitutions is None:
        return {}
    if not isinstance(substitutions, Mapping):
        raise InvalidInputError("substitutions", f"must be a mapping of variable names to terms, not "
                                                 f"{type(substitutions).__name__}")
    terms = (ox.NamedNode, ox.BlankNode, ox.Literal, ox.Triple)
    for name, value in substitutions.items():
        if not isinstance(name, str) or not _VARIABLE.fullmatch(name):
            raise InvalidInputError("substitutions", f"{name!r} is not a variable name")
        if not isinstance(value, terms):
            raise InvalidInputError("substitutions", f"?{name} must be a pyoxigraph term, not {type(value).__name__}")
    return dict(substitutions)


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_format(name: Any) -> str:
    """A result format's short name (or its media type)."""
    if isinstance(name, str):
        key = name.strip().lower()
        if key in FORMATS:
            return key
        for short, (media, _) in FORMATS.items():
            if key == media:
                return short
    raise InvalidInputError("format", f"unknown format {name!r}; use one of {', '.join(FORMATS)}")


@dataclass
class SparqlResult:
    """The answer to a query: ``kind`` is ``solutions`` (SELECT: ``variables`` and ``rows``), ``boolean``
    (ASK) or ``graph`` (CONSTRUCT/DESCRIBE: ``triples``). ``truncated``: the row limit cut it short."""

    kind: str
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[ox.Triple] = field(default_factory=list)
    truncated: bool = False

    def __len__(self) -> int:
        return len(self.rows) if self.kind == "solutions" else len(self.triples)

    def __iter__(self) -> Iterator[Any]:
        """The rows (a SELECT) or the triples (a CONSTRUCT)."""
        return iter(self.rows if self.kind != "graph" else self.triples)

    def default_format(self) -> str:
        return "turtle" if self.kind == "graph" else "json"

    def serialize(self, format: str | None = None) -> bytes:
        """The result in ``format`` (default: SPARQL JSON, or Turtle for a graph)."""
        name = check_format(format) if format is not None else self.default_format()
        wanted = FORMATS[name][1]
        if (self.kind == "graph") != (wanted == "graph"):
            kinds = [k for k, (_, w) in FORMATS.items() if (w == "graph") == (self.kind == "graph")]
            raise InvalidInputError("format", f"a {self.kind} result cannot be written as {name}; use one of "
                                              f"{', '.join(kinds)}")
        if self.kind == "graph":
            out = io.BytesIO()
            ox.serialize(self.triples, out, _GRAPH_FORMATS[name])
            return out.getvalue()
        return _write_results(self, _RESULT_FORMATS[name])

    def to_json(self) -> dict[str, Any]:
        """The SPARQL 1.1 JSON results object (a graph as N-Triples text under ``ntriples``)."""
        if self.kind == "graph":
            return {"ntriples": self.serialize("ntriples").decode("utf-8"), "truncated": self.truncated}
        doc: dict[str, Any] = json.loads(self.serialize("json"))
        doc["truncated"] = self.truncated
        return doc


def _write_results(result: SparqlResult, fmt: ox.QueryResultsFormat) -> bytes:
    """SELECT/ASK results through pyoxigraph's own writers (a boolean or the rows kept)."""
    if result.kind == "boolean":
        text = "true" if result.boolean else "false"
        parsed = ox.parse_query_results(f'{{"head":{{}},"boolean":{text}}}', format=ox.QueryResultsFormat.JSON)
        return bytes(parsed.serialize(format=fmt) or b"")
    json_rows = [{k: _json_term(v) for k, v in row.items() if v is not None} for row in result.rows]
    text = json.dumps({"head": {"vars": result.variables}, "results": {"bindings": json_rows}})
    parsed = ox.parse_query_results(text, format=ox.QueryResultsFormat.JSON)
    return bytes(parsed.serialize(format=fmt) or b"")


def _json_term(term: Any) -> dict[str, str]:
    """A term as a SPARQL JSON results binding."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    return {"type": "literal", "value": str(term)}  # a quoted triple: Cortex never writes one


def collect(raw: Any, limit: int, timeout: float | None = None, started: float = 0.0) -> SparqlResult:
    """Read at most ``limit`` rows (or triples) of pyoxigraph's answer; ``timeout`` seconds after ``started``
    (``time.monotonic()``), stop with :class:`QueryTimeoutError` (a streaming query stops there)."""
    deadline = (timeout, started + timeout) if timeout is not None else None
    if isinstance(raw, ox.QueryBoolean):
        return SparqlResult("boolean", boolean=bool(raw))
    if isinstance(raw, ox.QuerySolutions):
        variables = [v.value for v in raw.variables]
        rows: list[dict[str, Any]] = []
        truncated = False
        for solution in raw:
            if len(rows) == limit:
                truncated = True
                break
            rows.append({name: solution[name] for name in variables})
            _check_deadline(deadline, len(rows))
        return SparqlResult("solutions", variables=variables, rows=rows, truncated=truncated)
    triples: list[ox.Triple] = []
    truncated = False
    for triple in raw:
        if len(triples) == limit:
            truncated = True
            break
        triples.append(triple)
        _check_deadline(deadline, len(triples))
    return SparqlResult("graph", triples=triples, truncated=truncated)


def _check_deadline(deadline: tuple[float, float] | None, count: int) -> None:
    if deadline is not None and count % 256 == 0 and time.monotonic() > deadline[1]:
        raise QueryTimeoutError(deadline[0])


def from_json(doc: dict[str, Any]) -> SparqlResult:
    """A result back from :meth:`SparqlResult.to_json` (what a remote client receives)."""
    truncated = bool(doc.get("truncated"))
    if "ntriples" in doc:
        triples = [q.triple for q in ox.parse(doc["ntriples"].encode("utf-8"), ox.RdfFormat.N_TRIPLES)] \
            if doc["ntriples"] else []
        return SparqlResult("graph", triples=triples, truncated=truncated)
    parsed = ox.parse_query_results(json.dumps({k: v for k, v in doc.items() if k != "truncated"}),
                                    format=ox.QueryResultsFormat.JSON)
    result = collect(parsed, 2**62)
    result.truncated = truncated
    return result


def graphs_clause(graphs: Sequence[ox.NamedNode], named: Sequence[ox.NamedNode] | None = None) -> dict[str, Any]:
    """The dataset options that confine a query to ``graphs`` (as default graph and as named graphs; ``named``:
    those are the named graphs instead)."""
    return {"default_graph": list(graphs) or [ox.DefaultGraph()],
            "named_graphs": list(named if named is not None else graphs)}


def media_type(name: str) -> str:
    """The media type of a format."""
    return FORMATS[check_format(name)][0]


__all__ = ["DEFAULT_ROW_LIMIT", "DEFAULT_TIMEOUT", "FORMATS", "SparqlResult", "check_format", "check_substitutions",
           "collect", "configured_limit", "configured_timeout", "from_json", "graphs_clause", "media_type"]
