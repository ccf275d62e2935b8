"""Reading what a SPARQL server answers: solutions, graphs and a query's results, and the class decorator
that makes an answer Cortex cannot read a :class:`StoreError` naming the server, like any other of its failures."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pyoxigraph as ox

from cortex.errors import CortexError, StoreError

_UNREADABLE = (IndexError, KeyError, TypeError, AttributeError, ValueError, SyntaxError, UnicodeDecodeError)


def unreadable_answers_are_store_errors(cls: type) -> type:
    """Wrap every public method of ``cls`` so that an answer of the server it cannot read (no row where one is
    due, a variable missing, a value of another type, a document that is not what it says) is a
    :class:`StoreError` naming the server, like every other failure of the server: never an ``IndexError`` or
    ``KeyError`` out of a read. Cortex's own errors (bad input, conflicts) pass unchanged."""
    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def fail(self: Any, exc: BaseException) -> StoreError:
            return StoreError(f"the SPARQL server at {self.location} sent an answer Cortex cannot read ({name}: "
                              f"{type(exc).__name__}: {str(exc)[:200]})")

        if inspect.isgeneratorfunction(method):
            @functools.wraps(method)
            def generator(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    yield from method(self, *args, **kwargs)
                except CortexError:
                    raise
                except _UNREADABLE as exc:
                    raise fail(self, exc) from exc
            return generator

        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except CortexError:
                raise
            except _UNREADABLE as exc:
                raise fail(self, exc) from exc
        return call

    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, wrap(name, member))
    return cls


#: What Cortex asks a server to answer a SELECT/ASK in (it reads each: the server picks).
RESULTS_ACCEPT = ("application/sparql-results+json, application/sparql-results+xml;q=0.9, "
                  "text/tab-separated-values;q=0.8")
#: The SPARQL results formats Cortex reads, by the media type a server labels them with (CSV is lossy:
#: pyoxigraph, rightly, reads none).
_RESULTS = {"application/sparql-results+json": ox.QueryResultsFormat.JSON,
            "application/json": ox.QueryResultsFormat.JSON,
            "application/sparql-results+xml": ox.QueryResultsFormat.XML,
            "application/xml": ox.QueryResultsFormat.XML, "text/xml": ox.QueryResultsFormat.XML,
            "text/tab-separated-values": ox.QueryResultsFormat.TSV}
#: The RDF formats Cortex reads a CONSTRUCT's answer in, by media type.
_GRAPHS = {"application/n-triples": ox.RdfFormat.N_TRIPLES, "text/plain": ox.RdfFormat.N_TRIPLES,
           "text/turtle": ox.RdfFormat.TURTLE, "application/x-turtle": ox.RdfFormat.TURTLE,
           "application/rdf+xml": ox.RdfFormat.RDF_XML, "application/n-quads": ox.RdfFormat.N_QUADS,
           "application/trig": ox.RdfFormat.TRIG, "application/ld+json": ox.RdfFormat.JSON_LD}


def media_of(response: httpx.Response) -> str:
    """The media type a server labelled its answer with (lower case, without parameters)."""
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower()


def results_format(media: str) -> ox.QueryResultsFormat | None:
    """The SPARQL results format of an answer labelled ``media`` (None: not one Cortex reads; an unlabelled
    answer is read as JSON, what Cortex asked for first)."""
    return _RESULTS.get(media) if media else ox.QueryResultsFormat.JSON


def _results_of(response: httpx.Response, location: str) -> ox.QueryResultsFormat:
    fmt = results_format(media_of(response))
    if fmt is None:
        raise StoreError(f"the SPARQL server at {location} answered a query with {media_of(response)}, not SPARQL "
                         f"results Cortex reads (JSON, XML, TSV)")
    return fmt


def solutions(response: httpx.Response, required: Sequence[str], location: str) -> list[dict[str, Any]]:
    """The solutions of a SELECT (or ``[{"boolean": ...}]`` for an ASK) in SPARQL results (JSON, XML or TSV, as
    the server labels them), read at once, without those leaving a ``required`` variable unbound."""
    fmt = _results_of(response, location)
    try:
        result = ox.parse_query_results(response.content, fmt)
        if isinstance(result, ox.QueryBoolean):
            return [{"boolean": bool(result)}]
        names = [v.value for v in result.variables]
        rows = [{n: row[n] for n in names} for row in result]
        return [r for r in rows if all(r.get(n) is not None for n in required)] if required else rows
    except (SyntaxError, ValueError) as exc:
        raise StoreError(f"the SPARQL server at {location} sent unreadable results: {exc}") from None


def triples(response: httpx.Response, location: str) -> list[ox.Triple]:
    """The triples of a graph the server answered, in the RDF format its Content-Type names (N-Triples when
    it names none)."""
    fmt = _GRAPHS.get(media_of(response), ox.RdfFormat.N_TRIPLES)
    try:
        return [q.triple for q in ox.parse(response.content, fmt)]
    except SyntaxError as exc:
        raise StoreError(f"the SPARQL server at {location} sent an unreadable graph: {exc}") from None


def query_results(response: httpx.Response, location: str) -> Any:
    """An agent query's results (JSON, XML or TSV, as the server labels them), read whole once here, so that
    the caller's reading cannot fail on the server's document."""
    fmt = _results_of(response, location)
    try:
        parsed = ox.parse_query_results(response.content, fmt)
        if isinstance(parsed, ox.QuerySolutions):
            for _ in parsed:
                pass
        return ox.parse_query_results(response.content, fmt)
    except SyntaxError as exc:
        raise StoreError(f"the SPARQL server at {location} sent unreadable results: {exc}") from None


def query_form(text: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: the first keyword of a query as :func:`cortex.sparql.prepare` writes it
    (one token a line, after its BASE declarations)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i] == "BASE":
        i += 2
    return lines[i] if i < len(lines) and lines[i] in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE") else None
