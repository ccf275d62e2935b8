"""An agent's token against the SPARQL protocol route, the hostile way: empty dataset lists, a dataset naming
only the default graph while the query asks for every named graph, FROM NAMED and SERVICE in the text, an update
through the query route, an Accept header of 100 KB, q-values of garbage, a query of 10 MB."""

from __future__ import annotations

import httpx
import pytest

from tests.sparql.test_sparql_protocol import (CODER_GRAPH, CODER_NOTE, CONTENT, EVERY, GRAPH_OF, REVIEWER_GRAPH,
                                               REVIEWER_NOTE, Live, live)  # noqa: F401 (the fixture)

SPARQL_JSON = {"Accept": "application/sparql-results+json"}


@pytest.mark.parametrize("dataset", [{"default-graph-uri": [], "named-graph-uri": []}, {"default-graph-uri": []},
                                     {"named-graph-uri": []}, {"default-graph-uri": [REVIEWER_GRAPH]},
                                     {"named-graph-uri": [REVIEWER_GRAPH]}])
@pytest.mark.parametrize("query", [GRAPH_OF, EVERY, f"SELECT ?c FROM NAMED <{CODER_GRAPH}> WHERE {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }}",
                                   f"SELECT ?c FROM <{CODER_GRAPH}> WHERE {{ ?m {CONTENT} ?c }}",
                                   f"SELECT ?c WHERE {{ GRAPH <{CODER_GRAPH}> {{ ?m {CONTENT} ?c }} }}"])
def test_a_dataset_never_widens_what_the_token_reads(live: Live, dataset: dict, query: str) -> None:
    r = live.post(live.reviewer, json={"query": query, **dataset}, headers=SPARQL_JSON)
    assert r.status_code in (200, 400, 403), r.text
    assert CODER_NOTE not in r.text and CODER_GRAPH not in r.text.replace(query, ""), (dataset, r.text)


def test_updates_and_hostile_headers_and_sizes(live: Live) -> None:
    for update in ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", f"DROP GRAPH <{REVIEWER_GRAPH}>",
                   f"CLEAR ALL", f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:1/> {{ ?s ?p ?o }} }}"):
        r = live.post(live.reviewer, data={"query": update})
        assert r.status_code == 400, (update, r.status_code, r.text)
        r = live.post(live.reviewer, data={"update": update})
        assert r.status_code in (400, 405, 415), (update, r.status_code)
    r = live.get(live.reviewer, {"query": EVERY}, **SPARQL_JSON)
    assert [b["c"]["value"] for b in r.json()["results"]["bindings"]] == [REVIEWER_NOTE]  # nothing dropped
    # headers over 16 KiB are refused (431) even when they arrive in one read, where h11's bound does not apply
    for accept in ("application/sparql-results+json;q=0." + "9" * 100_000, ",".join(["text/csv;q=0.1"] * 6_000)):
        try:
            r = live.get(live.reviewer, {"query": EVERY}, Accept=accept)
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
            continue  # the server answered 431 and closed while the client was still sending: refused too
        assert r.status_code == 431 and REVIEWER_NOTE not in r.text, (accept[:60], r.status_code)
    for accept in ("a/b;q=nan, */*;q=-1, x;q=1e999", "\x7f;;;q==,,", "application/sparql-results+json;q=0",
                   "text/csv;q=garbage, application/sparql-results+json;q=0.5"):
        r = live.get(live.reviewer, {"query": EVERY}, Accept=accept)
        assert r.status_code in (200, 406), (accept[:60], r.status_code)
        assert REVIEWER_NOTE in r.text or r.status_code == 406
    huge = f"SELECT ?c WHERE {{ ?m {CONTENT} ?c }} # " + "x" * 10_000_000
    r = live.post(live.reviewer, content=huge.encode(), headers={"Content-Type": "application/sparql-query"})
    assert r.status_code in (200, 400, 413), r.status_code
    assert httpx.get(f"{live.server.url}/v1/health", timeout=30).status_code in (200, 401)  # the server lives
