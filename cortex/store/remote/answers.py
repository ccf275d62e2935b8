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


def solutions(content: bytes, required: Sequence[str], location: str) -> list[dict[str, Any]]:
    """The solutions of a SELECT (or ``[{"boolean": ...}]`` for an ASK) in SPARQL JSON results, read at once,
    without those leaving a ``required`` variable unbound."""
    try:
        result = ox.parse_query_results(content, ox.QueryResultsFormat.JSON)
        if isinstance(result, ox.QueryBoolean):
            return [{"boolean": bool(result)}]
        names = [v.value for v in result.variables]
        rows = [{n: row[n] for n in names} for row in result]
        return [r for r in rows if all(r.get(n) is not None for n in required)] if required else rows
    except (SyntaxError, ValueError) as exc:
        raise StoreError(f"the SPARQL server at {location} sent unreadable results: {exc}") from None


def triples(response: httpx.Response, location: str) -> list[ox.Triple]:
    """The triples of a graph the server answered (N-Triples, or Turtle when it says so)."""
    media = response.headers.get("content-type", "").split(";")[0].strip()
    fmt = ox.RdfFormat.TURTLE if media in ("text/turtle", "application/x-turtle") else ox.RdfFormat.N_TRIPLES
    try:
        return [q.triple for q in ox.parse(response.content, fmt)]
    except SyntaxError as exc:
        raise StoreError(f"the SPARQL server at {location} sent an unreadable graph: {exc}") from None


def query_results(content: bytes, location: str) -> Any:
    """An agent query's results in SPARQL JSON, read whole once here, so that the caller's reading cannot fail
    on the server's document."""
    try:
        parsed = ox.parse_query_results(content, ox.QueryResultsFormat.JSON)
        if isinstance(parsed, ox.QuerySolutions):
            for _ in parsed:
                pass
        return ox.parse_query_results(content, ox.QueryResultsFormat.JSON)
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
