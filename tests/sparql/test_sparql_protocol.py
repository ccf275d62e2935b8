"""The W3C SPARQL 1.1 Protocol as standard clients speak it, against a live ``cortex serve`` over loopback:
SPARQLWrapper with its defaults (SELECT as JSON and XML, ASK, CONSTRUCT), rdflib's ``Graph`` and ``Dataset`` over
a ``SPARQLStore``, and the protocol clause by clause (format hints, the dataset parameters within what a token
reads, 400 for what is malformed, content negotiation with q-values, every RDF format or 406). Last, the remote
store reading SPARQL XML and TSV results from a server that answers them (docs/sparql.md, "The protocol")."""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError

import httpx
import pyoxigraph as ox
import pytest
from rdflib import Dataset, Graph, URIRef
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, JSONLD, N3, POST, RDFXML, TSV, TURTLE, XML, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

from cortex import Cortex
from cortex.errors import StoreError
from tests.service_helpers import Server, make_project, start_server

CONTENT = "<urn:cortex:agentmem:content>"
EVERY = f"SELECT ?c WHERE {{ ?m {CONTENT} ?c }} ORDER BY ?c"
GRAPH_OF = f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }} ORDER BY ?g"
CONSTRUCT = f"CONSTRUCT {{ ?m {CONTENT} ?c }} WHERE {{ ?m {CONTENT} ?c }}"
CODER_GRAPH, REVIEWER_GRAPH = "urn:cortex:graph:agent:coder", "urn:cortex:graph:agent:reviewer"
# hostile text in what is stored: quotes, a newline, '>', a Unicode look-alike of 'a'
CODER_NOTE = 'coder\'s "fact" > one\nline two \u0430pi'
REVIEWER_NOTE = "reviewer's private fact"


class Live:
    """A running ``cortex serve`` with two agents' memories and a token for each."""

    def __init__(self, server: Server, coder: str, reviewer: str) -> None:
        self.server, self.admin, self.coder, self.reviewer = server, server.token, coder, reviewer
        self.url = f"{server.url}/v1/sparql"

    def get(self, token: str, params: dict | list, **headers: str) -> httpx.Response:
        return httpx.get(self.url, params=params, headers={"Authorization": f"Bearer {token}", **headers}, timeout=60)

    def post(self, token: str, **kwargs) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        return httpx.post(self.url, headers=headers, timeout=60, **kwargs)

    def wrapper(self, query: str, token: str, fmt: str | None = None, method: str | None = None) -> SPARQLWrapper:
        client = SPARQLWrapper(self.url)
        client.addCustomHttpHeader("Authorization", f"Bearer {token}")
        client.setQuery(query)
        if fmt:
            client.setReturnFormat(fmt)
        if method:
            client.setMethod(method)
        return client

    def store(self, token: str, method: str = "GET") -> SPARQLStore:
        return SPARQLStore(self.url, method=method, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    project = make_project(tmp_path_factory.mktemp("protocol"), "coder", "reviewer")
    server = start_server(project)
    try:
        for agent, note in (("coder", CODER_NOTE), ("reviewer", REVIEWER_NOTE)):
            assert server.call("POST", f"/v1/agents/{agent}/memories", json={"content": note}).status_code == 201
        tokens = [server.call("POST", "/v1/tokens", json={"agent": a}).json()["token"] for a in ("coder", "reviewer")]
        yield Live(server, *tokens)
    finally:
        server.stop()


def _values(doc: dict, name: str = "c") -> list[str]:
    return [b[name]["value"] for b in doc["results"]["bindings"]]


def _triples(body: bytes, fmt: ox.RdfFormat) -> set[tuple[str, str]]:
    return {(q.subject.value, q.object.value) for q in ox.parse(body, fmt)}


# -- real clients -------------------------------------------------------------------------------------------------

def test_sparqlwrapper_with_its_defaults(live: Live) -> None:
    result = live.wrapper(EVERY, live.admin).query()  # the default: XML, format=xml&output=xml&results=xml
    assert result.response.headers["content-type"].startswith("application/sparql-results+xml")
    literals = [n.firstChild.data for n in result.convert().getElementsByTagName("literal")]
    assert literals == [CODER_NOTE, REVIEWER_NOTE]
    for method in ("GET", POST):
        assert _values(live.wrapper(EVERY, live.admin, JSON, method).query().convert()) == [CODER_NOTE, REVIEWER_NOTE]
    assert _values(live.wrapper(EVERY, live.coder, JSON).query().convert()) == [CODER_NOTE]  # its graphs only
    assert live.wrapper("ASK { ?s ?p ?o }", live.coder, JSON).query().convert()["boolean"] is True
    ask = live.wrapper(f"ASK {{ ?m {CONTENT} \"{REVIEWER_NOTE}\" }}", live.coder).query().convert()
    assert ask.getElementsByTagName("boolean")[0].firstChild.data == "false"  # XML, and not the reviewer's
    for fmt in (XML, RDFXML, JSONLD, JSON):  # parsed into an rdflib graph by SPARQLWrapper
        graph = live.wrapper(CONSTRUCT, live.coder, fmt).query().convert()
        assert sorted(str(o) for o in graph.objects()) == [CODER_NOTE], fmt
    for fmt in (TURTLE, N3):  # returned as bytes
        body = live.wrapper(CONSTRUCT, live.admin, fmt).query().convert()
        assert {o for _, o in _triples(body, ox.RdfFormat.TURTLE)} == {CODER_NOTE, REVIEWER_NOTE}
    assert live.wrapper(EVERY, live.admin, CSV).query().convert().decode().splitlines()[0] == "c"
    tsv = live.wrapper(EVERY, live.coder, TSV).query().convert()
    assert [r["c"].value for r in ox.parse_query_results(tsv, ox.QueryResultsFormat.TSV)] == [CODER_NOTE]
    with pytest.raises(QueryBadFormed, match="query"):
        live.wrapper("SELECT * WHERE { ?s ?p ", live.admin, JSON).query()


def test_rdflib_graph_and_dataset_over_a_sparql_store(live: Live) -> None:
    # Dataset's default graph is rdflib's own `urn:x-rdflib:default`: the service's default graph
    rows = list(Dataset(store=live.store(live.admin)).query(EVERY))
    assert [str(r.c) for r in rows] == [CODER_NOTE, REVIEWER_NOTE]
    assert [str(r.c) for r in Dataset(store=live.store(live.coder)).query(EVERY)] == [CODER_NOTE]
    assert [str(r.c) for r in Dataset(store=live.store(live.coder), default_union=True).query(EVERY)] == [CODER_NOTE]
    assert [str(r.g) for r in Dataset(store=live.store(live.admin)).query(GRAPH_OF)] == [CODER_GRAPH, REVIEWER_GRAPH]
    # a Graph names itself as default-graph-uri: that graph only
    coder = Graph(store=live.store(live.admin), identifier=URIRef(CODER_GRAPH))
    assert [str(o) for o in coder.objects(None, URIRef(CONTENT[1:-1]))] == [CODER_NOTE]
    assert bool(coder.query(f"ASK {{ ?m {CONTENT} \"{REVIEWER_NOTE}\" }}")) is False
    own = Graph(store=live.store(live.reviewer, "POST"), identifier=URIRef(REVIEWER_GRAPH))
    assert [str(r.c) for r in own.query(EVERY)] == [REVIEWER_NOTE]
    # another agent's graph is refused, not read (rdflib: an error under GET, the status under POST)
    with pytest.raises(ValueError):
        list(Graph(store=live.store(live.reviewer), identifier=URIRef(CODER_GRAPH)).triples((None, None, None)))
    refused = Graph(store=live.store(live.reviewer, "POST"), identifier=URIRef(CODER_GRAPH)).query(EVERY)
    assert refused[0] == 403  # type: ignore[index]  # rdflib returns (status, message, None) under POST
    broken = Graph(store=live.store(live.admin, "POST")).query("SELECT * WHERE { ?s ?p ")
    assert broken[0] == 400  # type: ignore[index]


# -- the protocol, clause by clause -------------------------------------------------------------------------------

def test_format_hints_of_other_endpoints_are_read(live: Live) -> None:
    r = live.get(live.admin, {"query": EVERY, "format": "xml", "output": "xml", "results": "xml"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/sparql-results+xml")
    r = live.get(live.admin, {"query": EVERY, "output": "json"}, Accept="text/csv")  # the hint wins
    assert _values(r.json()) == [CODER_NOTE, REVIEWER_NOTE]
    r = live.get(live.admin, {"query": CONSTRUCT, "format": "xml"})  # xml for a graph: RDF/XML
    assert r.headers["content-type"].startswith("application/rdf+xml")
    assert len(_triples(r.content, ox.RdfFormat.RDF_XML)) == 2
    r = live.get(live.admin, {"query": CONSTRUCT, "format": "application/ld+json,application/x-json+ld"})
    assert r.headers["content-type"].startswith("application/ld+json")
    r = live.get(live.admin, {"query": EVERY, "output": "no-such-thing"}, Accept="text/tab-separated-values")
    assert r.status_code == 200 and r.text.startswith("?c")  # an unknown output= is ignored
    r = live.get(live.admin, {"query": EVERY, "format": "no-such-thing"})
    assert r.status_code == 400 and "format" in r.text and r.headers["content-type"].startswith("text/plain")
    r = live.get(live.admin, {"query": CONSTRUCT, "format": "csv"})  # no CSV of a graph
    assert r.status_code == 406 and "text/turtle" in r.text


def test_dataset_parameters_set_the_dataset(live: Live) -> None:
    both = [("default-graph-uri", CODER_GRAPH), ("default-graph-uri", REVIEWER_GRAPH)]
    r = live.get(live.admin, [("query", EVERY), *both], Accept="application/sparql-results+json")
    assert _values(r.json()) == [CODER_NOTE, REVIEWER_NOTE]  # repeated: their merge
    r = live.get(live.admin, {"query": EVERY, "default-graph-uri": CODER_GRAPH}, Accept="application/sparql-results+json")
    assert _values(r.json()) == [CODER_NOTE]
    # the protocol's dataset replaces the query's FROM
    query = f"SELECT ?c FROM <{REVIEWER_GRAPH}> WHERE {{ ?m {CONTENT} ?c }}"
    r = live.post(live.admin, data={"query": query, "default-graph-uri": CODER_GRAPH},
                  headers={"Accept": "application/sparql-results+json"})
    assert _values(r.json()) == [CODER_NOTE]
    # named graphs only: the default graph is empty, GRAPH sees exactly those
    r = live.post(live.admin, params={"named-graph-uri": REVIEWER_GRAPH}, content=GRAPH_OF,
                  headers={"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"})
    assert _values(r.json(), "g") == [REVIEWER_GRAPH]
    r = live.get(live.admin, {"query": EVERY, "named-graph-uri": REVIEWER_GRAPH}, Accept="application/sparql-results+json")
    assert _values(r.json()) == []
    r = live.post(live.admin, json={"query": EVERY, "default-graph-uri": [REVIEWER_GRAPH]},
                  headers={"Accept": "application/sparql-results+json"})
    assert _values(r.json()) == [REVIEWER_NOTE]
    for bad in ("", "not an iri", "urn:x>y", "urn:a\nb", "urn:\u0430", "urn:" + "x" * 100_000, "<urn:a>"):
        r = live.post(live.admin, data={"query": EVERY, "default-graph-uri": bad})
        assert r.status_code in (200, 400), bad
        if r.status_code == 200:  # an IRI no graph has: nothing, never an error of the server
            assert r.json()["results"]["bindings"] == [], bad
        else:
            assert "default-graph-uri" in r.text and r.headers["content-type"].startswith("text/plain")


def test_dataset_parameters_never_widen_what_a_token_reads(live: Live) -> None:
    sparql_json = {"Accept": "application/sparql-results+json"}
    for params in ({"default-graph-uri": CODER_GRAPH}, {"named-graph-uri": CODER_GRAPH},
                   [("default-graph-uri", REVIEWER_GRAPH), ("default-graph-uri", CODER_GRAPH)],
                   {"default-graph-uri": "urn:cortex:graph:log"}, {"named-graph-uri": "urn:cortex:graph:prov:agent:coder"}):
        items = list(params.items()) if isinstance(params, dict) else params
        r = live.get(live.reviewer, [("query", EVERY), *items], **sparql_json)
        assert r.status_code == 403 and CODER_NOTE not in r.text, params
        r = live.post(live.reviewer, data=dict([("query", GRAPH_OF), *items]))
        assert r.status_code == 403 and r.headers["content-type"].startswith("text/plain"), params
    r = live.get(live.reviewer, {"query": EVERY, "default-graph-uri": REVIEWER_GRAPH}, **sparql_json)
    assert _values(r.json()) == [REVIEWER_NOTE]
    r = live.get(live.reviewer, {"query": GRAPH_OF, "default-graph-uri": "urn:x-rdflib:default"}, **sparql_json)
    assert _values(r.json(), "g") == [REVIEWER_GRAPH]  # rdflib's default graph: what the token reads, no more
    r = live.get(live.reviewer, {"query": EVERY, "agent": "coder", "default-graph-uri": REVIEWER_GRAPH}, **sparql_json)
    assert r.status_code == 404  # not its agent, dataset or not


@pytest.mark.parametrize("how", ["get", "form", "sparql-query", "json"])
def test_malformed_queries_and_parameters_are_400(live: Live, how: str) -> None:
    for query in ("SELECT * WHERE { ?s ?p ", "DELETE WHERE { ?s ?p ?o }", "", "\x00\ufeff>\"'"):
        if how == "get":
            r = live.get(live.coder, {"query": query})
        elif how == "form":
            r = live.post(live.coder, data={"query": query})
        elif how == "sparql-query":
            r = live.post(live.coder, content=query.encode(), headers={"Content-Type": "application/sparql-query"})
        else:
            r = live.post(live.coder, json={"query": query})
        assert r.status_code == 400, (query, r.text)
        if how == "json":  # Cortex's own clients send JSON: its JSON error
            assert r.json()["error"]["field"] == "query"
        else:
            assert r.headers["content-type"].startswith("text/plain") and "query" in r.text
    assert live.get(live.coder, {"query": EVERY, "colour": "red"}).status_code == 400
    assert live.get(live.coder, {"query": EVERY, "limit": "many"}).status_code == 400
    assert live.get(live.coder, {}).status_code == 400
    r = live.post(live.coder, content=b"\xff\xfe", headers={"Content-Type": "application/sparql-query"})
    assert r.status_code == 400
    r = live.get("not-a-token", {"query": EVERY})
    assert r.status_code == 401


@pytest.mark.parametrize("accept, kind, media", [
    ("application/sparql-results+json;q=0.5, application/sparql-results+xml", "select", "application/sparql-results+xml"),
    ("text/csv;q=0.1, text/tab-separated-values;q=0.9", "select", "text/tab-separated-values"),
    ("*/*;q=0.1, text/csv", "select", "text/csv"),
    ("text/*", "select", "text/csv"),
    ("application/sparql-results+json;q=0, */*", "select", "application/sparql-results+xml"),
    ("*/*", "select", "application/sparql-results+json"),
    ("application/rdf+xml, application/sparql-results+xml", "select", "application/sparql-results+xml"),
    ("application/rdf+xml, application/sparql-results+xml", "ask", "application/sparql-results+xml"),
    ("application/rdf+xml, application/sparql-results+xml", "construct", "application/rdf+xml"),
    ("text/turtle;q=0.2, application/ld+json;q=0.8", "construct", "application/ld+json"),
    ("application/n-quads", "construct", "application/n-quads"),
    ("application/trig", "construct", "application/trig"),
    ("application/n-triples;q=0.9, text/turtle;q=0.9", "construct", "application/n-triples"),
    ("*/*", "construct", "text/turtle"),
    ("garbage, ;;q=, text/turtle;q=nope, application/n-triples", "construct", "application/n-triples"),
])
def test_accept_is_negotiated_with_q_values(live: Live, accept: str, kind: str, media: str) -> None:
    query = {"select": EVERY, "ask": "ASK { ?s ?p ?o }", "construct": CONSTRUCT}[kind]
    r = live.get(live.admin, {"query": query}, Accept=accept)
    assert r.status_code == 200 and r.headers["content-type"].split(";")[0] == media, r.text


def test_every_rdf_format_is_served_or_406(live: Live) -> None:
    formats = {"text/turtle": ox.RdfFormat.TURTLE, "application/n-triples": ox.RdfFormat.N_TRIPLES,
               "application/rdf+xml": ox.RdfFormat.RDF_XML, "application/ld+json": ox.RdfFormat.JSON_LD,
               "application/n-quads": ox.RdfFormat.N_QUADS, "application/trig": ox.RdfFormat.TRIG}
    for media, fmt in formats.items():
        r = live.get(live.coder, {"query": CONSTRUCT}, Accept=media)
        assert r.headers["content-type"].split(";")[0] == media
        assert {o for _, o in _triples(r.content, fmt)} == {CODER_NOTE}, media  # the hostile note, exactly
    r = live.get(live.coder, {"query": f"DESCRIBE ?m WHERE {{ ?m {CONTENT} ?c }}"}, Accept="application/ld+json")
    assert CODER_NOTE in {q.object.value for q in ox.parse(r.content, ox.RdfFormat.JSON_LD)}
    for query, accept in ((CONSTRUCT, "text/csv"), (CONSTRUCT, "application/sparql-results+json"),
                          (EVERY, "application/ld+json"), (EVERY, "text/turtle"), ("ASK {}", "image/png")):
        r = live.get(live.coder, {"query": query}, Accept=accept)
        assert r.status_code == 406 and r.headers["content-type"].startswith("text/plain"), (query, accept)
        served = r.text.split("it serves")[1]
        assert ("text/turtle" in served) == (query == CONSTRUCT) and ("text/csv" in served) != (query == CONSTRUCT)
    # Cortex's own clients keep their JSON (with truncated)
    r = live.post(live.coder, json={"query": CONSTRUCT}, headers={"Accept": "application/json"})
    assert r.json()["truncated"] is False and CODER_NOTE.split("\n")[0][:5] in r.json()["ntriples"]


# -- the remote store reads what a server answers -----------------------------------------------------------------

class Reencoding:
    """A proxy in front of a real ``oxigraph serve`` that answers every SELECT/ASK in SPARQL XML or TSV (as some
    servers do whatever is asked first), labelled as such."""

    def __init__(self, target: str, media: str) -> None:
        outer = self
        self.target, self.media, self.seen = target.rstrip("/"), media, set()

        class Handler(http.server.BaseHTTPRequestHandler):
            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "accept")}
                if "sparql-results" in headers.get("Accept", ""):
                    headers["Accept"] = "application/sparql-results+json"
                answer = httpx.request(self.command, outer.target + self.path, content=body, headers=headers,
                                       timeout=60)
                payload, media = answer.content, answer.headers.get("content-type", "")
                if media.startswith("application/sparql-results+json"):
                    payload, media = outer.reencode(payload)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def reencode(self, payload: bytes) -> tuple[bytes, str]:
        parsed = ox.parse_query_results(payload, ox.QueryResultsFormat.JSON)
        fmt = ox.QueryResultsFormat.TSV if self.media == "text/tab-separated-values" else ox.QueryResultsFormat.XML
        if isinstance(parsed, ox.QueryBoolean) and fmt == ox.QueryResultsFormat.TSV:
            fmt = ox.QueryResultsFormat.XML  # TSV has no boolean in the recommendation: XML, as a server would
        out = io.BytesIO()
        parsed.serialize(out, fmt)
        media = "text/tab-separated-values" if fmt == ox.QueryResultsFormat.TSV else "application/sparql-results+xml"
        self.seen.add(media)
        return out.getvalue(), f"{media}; charset=utf-8"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.server
@pytest.mark.parametrize("media", ["application/sparql-results+xml", "text/tab-separated-values"])
def test_the_remote_store_reads_xml_and_tsv_results(oxigraph_server, tmp_path: Path, media: str) -> None:
    oxigraph_server.clear()
    base = oxigraph_server.query_url.rsplit("/", 1)[0]
    proxy = Reencoding(base, media)
    try:
        with Cortex.open(f"sparql+{proxy.base}/query?update=/update&gsp=/store", embeddings=None) as cx:
            cx.agents.register("coder")
            cx.agents.register("reviewer")
            cx.store("coder", CODER_NOTE)
            cx.store("reviewer", REVIEWER_NOTE)
            assert [m.content for m in cx.recall("coder")] == [CODER_NOTE]
            assert [r["c"].value for r in cx.sparql(EVERY)] == [CODER_NOTE, REVIEWER_NOTE]
            assert [r["c"].value for r in cx.sparql(EVERY, agent="reviewer")] == [REVIEWER_NOTE]
            assert cx.sparql("ASK { ?s ?p ?o }", agent="coder").boolean is True
            assert [r["c"].value for r in cx.sparql(EVERY, default_graphs=[CODER_GRAPH])] == [CODER_NOTE]
        assert media in proxy.seen
    finally:
        proxy.close()


def test_an_answer_in_a_format_cortex_cannot_read_is_a_store_error() -> None:
    from cortex.store.remote.answers import query_results, solutions

    csv = httpx.Response(200, headers={"Content-Type": "text/csv"}, content=b"c\r\nx\r\n")
    with pytest.raises(StoreError, match="text/csv"):
        solutions(csv, (), "http://127.0.0.1:1/sparql")
    html = httpx.Response(200, headers={"Content-Type": "application/sparql-results+xml"}, content=b"<html>")
    with pytest.raises(StoreError, match="unreadable"):
        query_results(html, "http://127.0.0.1:1/sparql")
    tsv = httpx.Response(200, headers={"Content-Type": "text/tab-separated-values"}, content=b"?c\n\"a\\tb\"\n")
    assert [r["c"].value for r in solutions(tsv, ("c",), "here")] == ["a\tb"]


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_the_facade_takes_the_protocol_dataset(tmp_path: Path, where: str) -> None:
    """``Cortex.sparql``'s ``default_graphs``/``named_graphs``: in a thread (in memory) and in a worker process
    (on disk) alike; an agent may name only graphs it reads."""
    from cortex.errors import InvalidInputError, PermissionDeniedError

    with Cortex.open(None if where == "memory" else tmp_path / "store", embeddings=None) as cx:
        for agent, note in (("coder", CODER_NOTE), ("reviewer", REVIEWER_NOTE)):
            cx.agents.register(agent)
            cx.store(agent, note)
        assert [r["c"].value for r in cx.sparql(EVERY, default_graphs=[REVIEWER_GRAPH])] == [REVIEWER_NOTE]
        assert [r["c"].value for r in cx.sparql(EVERY, named_graphs=[REVIEWER_GRAPH])] == []
        assert [r["g"].value for r in cx.sparql(GRAPH_OF, named_graphs=[CODER_GRAPH])] == [CODER_GRAPH]
        assert [r["g"].value for r in cx.sparql(GRAPH_OF, default_graphs=[CODER_GRAPH])] == []
        assert [r["c"].value for r in cx.sparql(EVERY, agent="coder", default_graphs=[CODER_GRAPH])] == [CODER_NOTE]
        with pytest.raises(PermissionDeniedError) as refused:
            cx.sparql(EVERY, agent="coder", named_graphs=[REVIEWER_GRAPH])
        assert refused.value.field == "named-graph-uri"
        for bad in (["relative"], "urn:a-string-not-a-list", [7], ["urn:a b"]):
            with pytest.raises(InvalidInputError):
                cx.sparql(EVERY, default_graphs=bad)  # type: ignore[arg-type]


def test_cortex_s_own_client_passes_the_dataset(live: Live) -> None:
    from cortex.client import RemoteCortex
    from cortex.errors import PermissionDeniedError

    with RemoteCortex(live.server.url, live.admin) as cx:
        assert [r["c"].value for r in cx.sparql(EVERY, default_graphs=[CODER_GRAPH])] == [CODER_NOTE]
    with RemoteCortex(live.server.url, live.reviewer) as cx:
        with pytest.raises(PermissionDeniedError):
            cx.sparql(EVERY, default_graphs=[CODER_GRAPH])
