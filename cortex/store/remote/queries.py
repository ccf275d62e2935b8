"""The SPARQL queries agents send to a remote store, on the dataset they name, and whether the server honours
that dataset at all."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx
from pyoxigraph import Literal, NamedNode

from cortex.errors import InvalidInputError, QueryTimeoutError, StoreError
from cortex.model import Scope
from cortex.store.remote.answers import (
    RESULTS_ACCEPT,
    media_of,
    query_form,
    query_results,
    solutions,
    unreadable_answers_are_store_errors,
)
from cortex.store.remote.changelog import ChangeLog
from cortex.store.remote.protocol import PartialAnswerError

log = logging.getLogger("cortex.store")


@unreadable_answers_are_store_errors
class AgentQueries(ChangeLog):
    """Agents' queries on a :class:`~cortex.store.remote.RemoteStore`."""

    _confines: bool | None

    def scopes(self) -> list[Scope]:
        rows = self._select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?m a {self.vocab.memory_class} }} }}")
        found = (self.vocab.scope_of_graph(row["g"].value) for row in rows if isinstance(row["g"], NamedNode))
        return sorted({s for s in found if s is not None})

    def query(self, sparql: str, substitutions: Mapping[str, Any] | None = None, **dataset: Any) -> Any:
        if substitutions:
            raise InvalidInputError("substitutions", "a remote store takes bindings as a VALUES clause of the query "
                                                     "(sparql.prepare writes them)")
        text = sparql
        params: dict[str, list[str]] = {}
        if dataset.get("use_default_graph_as_union"):  # every graph, and their union as the default graph
            scopes = self.scopes()
            graphs = [g.value for s in scopes for g in (self.vocab.graph(s), self.vocab.prov_graph(s))] \
                + [self.codec.log_graph.value]
            params["default-graph-uri"] = params["named-graph-uri"] = graphs
        else:
            default = dataset.get("default_graph")
            if default is not None:
                params["default-graph-uri"] = [g.value for g in default if isinstance(g, NamedNode)] \
                    or [f"{self.vocab.ns}:graph:none"]
            named = dataset.get("named_graphs")
            if named is not None:
                params["named-graph-uri"] = [g.value for g in named] or [f"{self.vocab.ns}:graph:none"]
        graph = query_form(sparql) in ("CONSTRUCT", "DESCRIBE")
        response = self._client_query(text, params, graph)
        media = media_of(response)
        # Virtuoso may answer SPARQL results (JSON) to a CONSTRUCT
        if not graph or media.startswith("application/sparql-results") or media == "application/json":
            return query_results(response, self.location)
        return iter(self._parse_graph(response))

    def confines_queries(self) -> bool:
        """Whether the server runs a query on the dataset it names (``FROM``/``FROM NAMED`` in its text and the
        protocol's ``default-graph-uri``/``named-graph-uri``) rather than on every graph: asked once, by a query
        whose dataset is the log graph looking for a triple kept in another graph for the question."""
        if self._confines is None:
            probe, p_probe = NamedNode(f"{self.vocab.ns}:log:probe"), self.vocab.predicate("probe")
            inside, outside = self.codec.log_graph, NamedNode(f"{self.vocab.ns}:graph:probe")
            if not self._select(f"ASK {{ GRAPH {outside} {{ {probe} {p_probe} ?o }} }}")[0]["boolean"]:
                # the dataset's graph must exist (rdflib's engine fails on a FROM of an unknown graph)
                self._update([f"INSERT DATA {{ GRAPH {inside} {{ {probe} {p_probe} {Literal('inside')} }} "
                              f"GRAPH {outside} {{ {probe} {p_probe} {Literal('outside')} }} }}"], "the dataset probe")
            text = (f"ASK\nFROM\n{inside}\nFROM\nNAMED\n{inside}\nWHERE\n{{ {{ {probe} {p_probe} "
                    f"{Literal('outside')} }} UNION {{ GRAPH ?g {{ {probe} {p_probe} {Literal('outside')} }} }} }}\n")
            answer = self._client_query(text, {"default-graph-uri": [inside.value],
                                               "named-graph-uri": [inside.value]}, False)
            self._confines = not solutions(answer, (), self.location)[0]["boolean"]
            if not self._confines:
                log.warning("the SPARQL server at %s ignores the dataset a query names: agents' SPARQL queries are "
                            "refused on this store", self.location)
        return self._confines

    def _client_query(self, text: str, params: Mapping[str, list[str]], graph: bool) -> httpx.Response:
        # one kind of answer asked for: Virtuoso answers a CONSTRUCT in JSON results when JSON is acceptable
        accept = "application/n-triples, text/turtle;q=0.8" if graph else RESULTS_ACCEPT
        try:
            return self._send(self.endpoint.query_url, data={"query": text, **params}, headers={"Accept": accept},
                              idempotent=True, what="a query")
        except PartialAnswerError:
            raise QueryTimeoutError(self.endpoint.timeout) from None
        except StoreError as exc:
            if "(HTTP 400)" in str(exc):
                raise InvalidInputError("query", f"was refused by the SPARQL server: {exc}") from None
            raise
