"""The read-only SPARQL surface (docs/sparql.md) on every surface: the Python API, HTTP (SPARQL protocol, with
agent tokens confined to the graphs their agent reads), the MCP client, the CLI and the remote client against a
real server. Hostile queries change nothing."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from mcp import Client

from cortex import Cortex, InvalidInputError
from cortex.agents import AgentSettings
from cortex.errors import QueryTimeoutError
from cortex.service.auth import ADMIN, Principal, TokenStore
from cortex.client import RemoteCortex
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

from tests.conftest import remote_location
from tests.service_helpers import asgi_request, make_project, run_cli, start_server
from tests.app.test_scopes import DEFINITIONS, write_agents
from tests.paths import ROOT

CONTENT = "<urn:cortex:agentmem:content>"
EVERY_CONTENT = f"SELECT ?c WHERE {{ ?m {CONTENT} ?c }} ORDER BY ?c"


@pytest.fixture
def team_cx(store_path: Path, clock, backend: str, request: pytest.FixtureRequest) -> Cortex:
    """Three agents in two teams and the swarm: on the embedded store, and on each SPARQL server."""
    location = store_path if backend == "embedded" else remote_location(request, backend)
    store_path.mkdir(exist_ok=True)  # the state directory of the HTTP tests' tokens
    cx = Cortex.open(location, clock=clock, embeddings=None)
    cx.agents.register("lead", settings=AgentSettings(teams=("backend",), lead=True))
    cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
    cx.agents.register("ui", settings=AgentSettings(teams=("frontend",)))
    cx.store("api", "api private note")
    cx.store("api", "backend shared note", scope="team:backend")
    cx.store("ui", "ui private note")
    cx.store("ui", "frontend shared note", scope="team:frontend")
    cx.inject_learning("lead", "swarm learning", "best-practice")
    yield cx
    cx.close()


def contents(result) -> list[str]:
    return [row["c"].value for row in result]


def test_an_agent_sees_exactly_the_graphs_it_reads_whatever_the_query_names(team_cx):
    everything = ["api private note", "backend shared note", "frontend shared note", "swarm learning",
                  "ui private note"]
    assert contents(team_cx.sparql(EVERY_CONTENT)) == everything  # admin: the whole store
    mine = ["api private note", "backend shared note", "swarm learning"]
    assert contents(team_cx.sparql(EVERY_CONTENT, agent="api")) == mine
    for query in (f"SELECT ?c FROM <urn:cortex:graph:agent:ui> WHERE {{ ?m {CONTENT} ?c }}",
                  f"SELECT ?c FROM NAMED <urn:cortex:graph:agent:ui> WHERE {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }}",
                  f"SELECT ?c WHERE {{ GRAPH <urn:cortex:graph:team:frontend> {{ ?m {CONTENT} ?c }} }}",
                  f"SELECT ?c WHERE {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }}"):
        # the query's own dataset is replaced by the agent's, on every backend
        seen = set(contents(team_cx.sparql(query, agent="api")))
        assert seen <= set(mine), query
    graphs = {row["g"].value for row in team_cx.sparql("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
                                                       agent="api")}
    assert graphs == {"urn:cortex:graph:agent:api", "urn:cortex:graph:team:backend", "urn:cortex:graph:swarm"}


def test_results_in_every_format_with_a_row_limit(team_cx):
    result = team_cx.sparql(EVERY_CONTENT, limit=2)
    assert (len(result), result.truncated) == (2, True)
    assert json.loads(result.serialize("json"))["results"]["bindings"][0]["c"]["value"] == "api private note"
    assert list(csv.reader(io.StringIO(result.serialize("csv").decode())))[0] == ["c"]
    assert result.serialize("tsv").decode().splitlines()[1] == '"api private note"'
    assert b"<sparql" in result.serialize("xml")
    assert team_cx.sparql(EVERY_CONTENT, limit=10).truncated is False
    assert team_cx.sparql("ASK { ?s ?p ?o }", agent="ui").boolean is True
    graph = team_cx.sparql(f"CONSTRUCT {{ ?m {CONTENT} ?c }} WHERE {{ ?m {CONTENT} ?c }}", agent="ui")
    triples = list(ox.parse(graph.serialize("ntriples"), ox.RdfFormat.N_TRIPLES))
    assert {t.object.value for t in triples} == {"ui private note", "frontend shared note", "swarm learning"}
    assert b"frontend shared note" in graph.serialize("turtle")
    with pytest.raises(InvalidInputError) as err:
        graph.serialize("csv")
    assert err.value.field == "format"


@pytest.mark.parametrize("query", [
    "INSERT DATA { GRAPH <urn:cortex:graph:agent:api> { <urn:x> <urn:y> \"z\" } }",
    "PREFIX a: <urn:a:> DELETE WHERE { GRAPH ?g { ?s ?p ?o } }",
    "# a comment\nCLEAR ALL",
    "DROP GRAPH <urn:cortex:graph:agent:api>",
    "LOAD <http://example.org/data.ttl>",
    "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o ",
    "",
    "SELECT * WHERE { ?s ?p \"}\" } ; DELETE WHERE { ?s ?p ?o }",
])
def test_updates_service_and_broken_queries_are_refused_and_change_nothing(team_cx, query):
    before = contents(team_cx.sparql(EVERY_CONTENT))
    with pytest.raises(InvalidInputError) as err:
        team_cx.sparql(query)
    assert err.value.field == "query"
    assert contents(team_cx.sparql(EVERY_CONTENT)) == before


def test_keywords_inside_strings_and_iris_are_not_refused(team_cx):
    team_cx.store("api", "how to DELETE a SERVICE account; INSERT } > \"quotes\"")
    query = ('SELECT ?c WHERE { ?m <urn:cortex:agentmem:content> ?c '
             'FILTER(CONTAINS(?c, "DELETE a SERVICE account; INSERT }")) }')
    assert contents(team_cx.sparql(query, agent="api")) == ["how to DELETE a SERVICE account; INSERT } > \"quotes\""]


def test_a_slow_query_times_out(tmp_path):
    with Cortex.open(tmp_path / "store", embeddings=None) as cx:
        cx.agents.register("a")
        cx.store_many("a", [{"content": f"note {i}"} for i in range(12)])
        # ~110^3 combinations: a few seconds of work that yields no row before the end (an aggregate)
        slow = ("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i "
                "FILTER(STR(?c) = CONCAT(STR(?f), STR(?i), \"never\")) }")
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError) as err:
            cx.sparql(slow, timeout=0.2)
        assert time.monotonic() - started < 2 and err.value.field == "timeout"
        with pytest.raises(InvalidInputError):
            cx.sparql("ASK {}", timeout=-1)


def test_http_speaks_the_sparql_protocol_with_scoped_tokens(team_cx, store_path):
    tokens = TokenStore(store_path)
    admin, api = tokens.create(None), tokens.create("api")
    app = create_app(team_cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)

    def call(method: str, token: str, **kwargs) -> httpx.Response:
        return asgi_request(app, method, "/v1/sparql", token, **kwargs)

    sparql_json = {"Accept": "application/sparql-results+json"}
    r = call("GET", api, params={"query": EVERY_CONTENT}, headers=sparql_json)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/sparql-results+json")
    assert [b["c"]["value"] for b in r.json()["results"]["bindings"]] == [
        "api private note", "backend shared note", "swarm learning"]
    r = call("POST", api, content=EVERY_CONTENT, headers={"Content-Type": "application/sparql-query",
                                                          "Accept": "text/csv"})
    assert r.headers["content-type"].startswith("text/csv") and "ui private note" not in r.text
    r = call("POST", admin, data={"query": EVERY_CONTENT, "limit": "1"}, headers={"Accept": "text/tab-separated-values"})
    assert r.text.splitlines() == ["?c", '"api private note"'] and r.headers["cortex-truncated"] == "true"
    r = call("POST", admin, data={"query": EVERY_CONTENT, "agent": "ui"}, headers=sparql_json)
    assert len(r.json()["results"]["bindings"]) == 3  # an admin may look as an agent
    assert call("POST", api, data={"query": EVERY_CONTENT, "agent": "ui"}).status_code == 404  # not its agent
    ui = tokens.create("ui")  # not a member of backend: none of its graphs, whatever the query names
    for query in (EVERY_CONTENT, f"SELECT ?c FROM <urn:cortex:graph:team:backend> WHERE {{ ?m {CONTENT} ?c }}",
                  f"SELECT ?c WHERE {{ GRAPH <urn:cortex:graph:agent:api> {{ ?m {CONTENT} ?c }} }}"):
        answer = call("POST", ui, data={"query": query}, headers=sparql_json)
        seen = [b["c"]["value"] for b in answer.json()["results"]["bindings"]]
        assert set(seen) <= {"ui private note", "frontend shared note", "swarm learning"}, query
    r = call("POST", api, content=f"CONSTRUCT {{ ?m {CONTENT} ?c }} WHERE {{ ?m {CONTENT} ?c }}",
             headers={"Content-Type": "application/sparql-query", "Accept": "application/n-triples"})
    assert r.headers["content-type"].startswith("application/n-triples") and r.text.count(" .\n") == 3
    r = call("POST", api, content="DELETE WHERE { ?s ?p ?o }", headers={"Content-Type": "application/sparql-query"})
    # the protocol: 400, a text body to a SPARQL client
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/plain") and "query" in r.text
    r = call("POST", api, json={"query": "ASK { ?s ?p ?o }"})  # any client: plain SPARQL JSON
    assert r.json() == {"head": {}, "boolean": True}
    r = call("POST", api, json={"query": "ASK { ?s ?p ?o }"}, headers={"Accept": "application/json"})
    assert r.json() == {"head": {}, "boolean": True, "truncated": False}  # Cortex's own clients
    assert call("POST", api, json={"query": "ASK {}", "limit": 10**9}).status_code == 400  # above the cap
    assert call("POST", api, json={"query": "ASK {}", "colour": "red"}).json()["error"]["field"] == "colour"
    assert call("POST", api, content="ASK {}", headers={"Content-Type": "text/plain"}).status_code == 400
    assert call("GET", None, params={"query": "ASK {}"}).status_code == 401
    assert "/v1/sparql" in asgi_request(app, "GET", "/openapi.json", admin).json()["paths"]
    assert len(team_cx.sparql(EVERY_CONTENT)) == 5  # nothing changed


def test_mcp_tool_sparql_query(team_cx):
    who = {"agent": "ui"}

    async def main() -> None:
        async with Client(build_mcp(lambda: team_cx, lambda request: Principal(agent=who["agent"]))) as client:
            tool = {t.name: t for t in (await client.list_tools()).tools}["sparql_query"]
            assert list(tool.input_schema["properties"])[0] == "agent" and "read-only" in tool.description.lower() \
                or "refused" in tool.description
            r = await client.call_tool("sparql_query", {"agent": "ui", "query": EVERY_CONTENT})
            assert [row["c"] for row in r.structured_content["rows"]] == [
                "frontend shared note", "swarm learning", "ui private note"]
            r = await client.call_tool("sparql_query", {"agent": "ui", "query": EVERY_CONTENT, "limit": 1})
            assert r.structured_content["truncated"] is True
            r = await client.call_tool("sparql_query", {"agent": "ui", "query": "CLEAR ALL"})
            assert r.is_error and "read-only" in r.content[0].text
            r = await client.call_tool("sparql_query", {"agent": "api", "query": EVERY_CONTENT})
            assert r.is_error  # a token of ui cannot query as api

    asyncio.run(main())
    assert len(team_cx.sparql(EVERY_CONTENT)) == 5
    assert ADMIN.admin


def test_cli_and_remote_client(tmp_path):
    project = make_project(tmp_path / "proj")
    write_agents(project / "agent_defs", DEFINITIONS)
    env = {"CORTEX_NO_SERVER": "1"}
    assert run_cli(project, "store", "api", "backend fact", "--scope", "team:backend", env=env).returncode == 0
    assert run_cli(project, "store", "ui", "ui fact", env=env).returncode == 0
    table = run_cli(project, "sparql", EVERY_CONTENT, env=env)
    assert table.returncode == 0 and table.stdout.splitlines()[1:] == ["backend fact", "ui fact"]
    scoped = run_cli(project, "sparql", EVERY_CONTENT, "--agent", "api", "--format", "csv", env=env)
    assert scoped.stdout.splitlines() == ["c", "backend fact"]
    (project / "q.rq").write_text("ASK { ?s ?p ?o }")
    assert run_cli(project, "sparql", "-f", "q.rq", env=env).stdout.strip() == "true"
    cut = run_cli(project, "sparql", EVERY_CONTENT, "--limit", "1", "--format", "json", env=env)
    assert len(json.loads(cut.stdout)["results"]["bindings"]) == 1 and "cut at 1 rows" in cut.stderr
    refused = run_cli(project, "sparql", "DROP ALL", env=env)
    assert refused.returncode == 1 and "read-only" in refused.stderr
    server = start_server(project)
    try:
        with RemoteCortex(server.url, server.token) as cx:
            assert contents(cx.sparql(EVERY_CONTENT, agent="api")) == ["backend fact"]
            graph = cx.sparql(f"CONSTRUCT {{ ?m {CONTENT} ?c }} WHERE {{ ?m {CONTENT} ?c }}")
            assert {t.object.value for t in graph} == {"backend fact", "ui fact"}
            with pytest.raises(InvalidInputError) as err:
                cx.sparql("INSERT DATA { <urn:a> <urn:b> <urn:c> }")
            assert err.value.field == "query"
    finally:
        server.stop()


def test_the_queries_of_docs_sparql_md_run(team_cx, clock):
    """docs/sparql.md stays true: each of its queries runs, as an admin and as an agent, and finds something."""
    import re

    old = team_cx.store("api", "deploys on friday", tags=["deploy"], ttl="12h")
    team_cx.update("api", old.id, content="deploys on fridays")
    team_cx.supersede("api", old.id, "deploys on tuesdays", reason="freeze")
    team_cx.touch("api", old.id)
    doc = (ROOT / "docs" / "sparql.md").read_text(encoding="utf-8")
    queries = re.findall(r"```sparql\n(.*?)```", doc, re.S)
    assert len(queries) == 7
    for query in queries:
        query = query.replace("2026-11-16T00:00:00Z", (clock.now - timedelta(days=7)).isoformat())
        query = query.replace("2026-11-25T00:00:00Z", (clock.now + timedelta(days=1)).isoformat())
        assert len(team_cx.sparql(query)) > 0, query
        team_cx.sparql(query, agent="api")


@pytest.mark.parametrize("query", [
    # an escaped quote in a prefixed name must not hide what follows from the check
    "PREFIX ex: <urn:x:> SELECT ?z WHERE { OPTIONAL { ?s ex:a\\' ?o } SERVICE <http://127.0.0.1:9/sparql> "
    "{ ?x ?y ?z } FILTER(?z != 'x') }",
    "select * where { service silent <http://127.0.0.1:9/> { ?s ?p ?o } }",
    "SELECT * {" + "{" * 2500 + "}" * 2500 + "}",  # pyoxigraph's parser would overflow its stack
    "SELECT * { ?s ?p '\ud800' }",
])
def test_hostile_queries_are_refused_before_the_engine_sees_them(team_cx, query):
    with pytest.raises(InvalidInputError) as err:
        team_cx.sparql(query, agent="api")
    assert err.value.field == "query"


@pytest.mark.parametrize("query", [
    "PREFIX with: <urn:x:> SELECT * { ?s ?p ?o }",
    "PREFIX delete: <urn:x:> SELECT * { ?s delete:p ?o }",
    "SELECT ?service WHERE { ?service ?p ?o }",
    "PREFIX service: <urn:x:> ASK { ?s service:p ?o }",
    "ASK { ?s ?p 'x'@service }",
])
def test_read_queries_that_look_like_updates_run(team_cx, query):
    team_cx.sparql(query, agent="api")


def test_engine_and_binding_errors_are_cortex_errors(team_cx):
    with pytest.raises(InvalidInputError) as err:
        team_cx.sparql("SELECT ?s WHERE { ?s ?p ?o }", {"g": ox.NamedNode("urn:x")})  # ?g is not projected
    assert err.value.field == "query"
    for bad in ({"bad name": ox.Literal("x")}, {"c": "x"}, ["c"]):
        with pytest.raises(InvalidInputError) as err:
            team_cx.sparql(EVERY_CONTENT, bad)
        assert err.value.field == "substitutions"
