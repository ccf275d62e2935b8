"""The engine runs exactly the query that was judged (issue 18, findings 1 and 2): codepoint escapes, comments
and quotes cannot make the check and the engine read two different queries; an agent's dataset is written into
the query itself, and a server that ignores it is refused. Every surface (Python, HTTP GET and POST, MCP, CLI)
and every backend; a hypothesis fuzz checks what reaches the engine."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from cortex import Cortex, InvalidInputError, sparql
from cortex.agents import AgentSettings
from cortex.errors import PermissionDeniedError
from cortex.service.auth import Principal, TokenStore
from cortex.service.http import create_app
from cortex.service.mcp import build_mcp

from tests.conftest import remote_location
from tests.service_helpers import asgi_request, make_project, run_cli

CONTENT = "<urn:cortex:agentmem:content>"
SECRET = {"ui private note", "frontend shared note"}  # what agent api must never read


class Recorder:
    """A loopback HTTP server that records every request: a SERVICE call that reached an engine."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                recorder.paths.append(self.path)
                self.send_response(500)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/query"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


def attack(url: str) -> str:
    """The reported bypass: rdflib expanded ``\\u0022`` and saw a string, a comment and ``AS ?y``; pyoxigraph saw a
    string holding a quote, then ``SERVICE`` reading every graph."""
    return (f'SELECT ?c WHERE {{ BIND("\\u0022 # " AS ?x) SERVICE <{url}> {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }} }} '
            f'#\\u000A AS ?y) }}')


def team(location, clock=None) -> Cortex:
    cx = Cortex.open(location, embeddings=None, **({"clock": clock} if clock else {}))
    cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
    cx.agents.register("ui", settings=AgentSettings(teams=("frontend",)))
    cx.store("api", "api private note")
    cx.store("api", "backend shared note", scope="team:backend")
    cx.store("ui", "ui private note")
    cx.store("ui", "frontend shared note", scope="team:frontend")
    return cx


@pytest.fixture
def team_cx(store_path: Path, backend: str, request: pytest.FixtureRequest) -> Iterator[Cortex]:
    location = store_path if backend == "embedded" else remote_location(request, backend)
    store_path.mkdir(exist_ok=True)
    cx = team(location)
    yield cx
    cx.close()


def values(result) -> set[str]:
    return {term.value for row in result for term in row.values() if term is not None}


# -- finding 1: the SERVICE check could be bypassed --------------------------------------------------------


def test_the_reported_escape_attack_reaches_no_endpoint_and_reads_nothing_else(team_cx, recorder):
    """On the embedded store the engine would call the recorder; on a server, SERVICE pointing at the server's
    own endpoint would read every graph: neither may happen."""
    targets = [recorder.url]
    if team_cx.store_shared:
        targets.append(team_cx.info()["store"].removeprefix("sparql+"))
    for url in targets:
        try:
            result = team_cx.sparql(attack(url), agent="api")
        except InvalidInputError:
            continue
        assert not values(result) & SECRET
    assert recorder.paths == []


@pytest.mark.parametrize("query", [
    'SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}',  # the keyword spelled with an escape
    'SELECT * WHERE {{ SERV\\u0049CE <{url}> {{ ?s ?p ?o }} }}',
    'PREFIX service: <urn:x:> SELECT * WHERE {{ service:x {{ ?s ?p ?o }} }}',
    "SELECT * WHERE {{ BIND('\\u0027' AS ?a) SERVICE <{url}> {{ ?s ?p ?o }} }} # ' }}",
    'SELECT * WHERE {{ BIND("""\\u0022\\u0022\\u0022 # """ AS ?a) SERVICE <{url}> {{ ?s ?p ?o }} }}',
    'SELECT * WHERE {{ ?s ?p "\\\\u0022" SERVICE <{url}> {{ ?s ?p ?o }} }}',
    'SELECT * WHERE {{ ?s ?p ?o FILTER(?o <?x#>) SERVICE <{url}> {{ ?s ?p ?o }} }}',
    'DEFINE input:grab-all "yes" SELECT * WHERE {{ ?s ?p ?o }}',
])
def test_every_spelling_of_service_is_refused_and_reaches_nothing(team_cx, recorder, query):
    with pytest.raises(InvalidInputError) as err:
        team_cx.sparql(query.format(url=recorder.url), agent="api")
    assert err.value.field == "query"
    assert recorder.paths == []


def test_strings_keep_what_they_hold(team_cx):
    """A query about text with quotes, comment signs, braces and keywords means what it says."""
    team_cx.store("api", 'say "hi" # not a comment } SERVICE')
    query = (f'SELECT ?c WHERE {{ ?m {CONTENT} ?c FILTER(CONTAINS(?c, "\\"hi\\" # not a comment }} SERVICE")) '
             f'FILTER(?c != \'\'\'x\'\'\') }}')
    assert [row["c"].value for row in team_cx.sparql(query, agent="api")] == ['say "hi" # not a comment } SERVICE']
    # an escape means its character wherever it is, as the recommendation says: this is "" hi "", not a string
    escaped = f'SELECT ?c WHERE {{ ?m {CONTENT} ?c FILTER(CONTAINS(?c, "\\u0022hi\\u0022")) }}'
    with pytest.raises(InvalidInputError, match="'hi' at line 1"):
        team_cx.sparql(escaped, agent="api")
    assert len(team_cx.sparql(escaped.replace("\\u0022", '\\"'), agent="api")) == 1


def test_the_attack_on_every_surface(tmp_path, recorder):
    """HTTP GET and POST, MCP ``sparql_query`` and ``cortex sparql --agent``, with an agent token."""
    project = make_project(tmp_path / "p", "api", "ui")
    store = project / ".cortex" / "store"
    with Cortex.open(store, embeddings=None, agent_dirs=[project / "agent_defs"]) as cx:
        cx.store("ui", "ui private note")
        cx.store("api", "api private note")
        tokens = TokenStore(store)
        api = tokens.create("api")
        app = create_app(cx, tokens=tokens, allowed_hosts=["127.0.0.1"], mcp=False)
        query = attack(recorder.url)
        for method, kwargs in (("GET", {"params": {"query": query}}), ("POST", {"data": {"query": query}}),
                               ("POST", {"content": query, "headers": {"Content-Type": "application/sparql-query"}})):
            answer = asgi_request(app, method, "/v1/sparql", api, **kwargs)
            assert answer.status_code in (200, 422), answer.text
            assert "ui private note" not in answer.text

        async def mcp() -> None:
            async with Client(build_mcp(lambda: cx, lambda request: Principal(agent="api"))) as client:
                result = await client.call_tool("sparql_query", {"agent": "api", "query": query})
                assert "ui private note" not in str(result)

        asyncio.run(mcp())
    ran = run_cli(project, "sparql", "--agent", "api", query, env={"CORTEX_NO_SERVER": "1"})
    assert "ui private note" not in ran.stdout
    assert recorder.paths == []


# -- the fuzz: what reaches the engine is exactly what was judged --------------------------------------------

FRAGMENTS = [
    "SELECT ?c WHERE {", "SELECT * {", "ASK {", "CONSTRUCT { ?s ?p ?o } WHERE {", "}", " ", "\n", "\t",
    "# comment ", "#", "\\u000A", "\\u000D", "\\u0022", "\\u0023", "\\u0027", "\\u003E", "\\u007B", "\\u007D",
    "\\U0000000A", '"', "'", '"""', "'''", '\\"', "\\'", "\\\\", "SERVICE", "service", "\\u0053ERVICE",
    "SERV\\u0049CE", "SERVICE SILENT", "<URL>", "<urn:x>", "<", ">", "PREFIX service: <urn:s:> ", "service:x",
    "PREFIX : <urn:e:> ", ":x", "{", f"?m {CONTENT} ?c", "GRAPH ?g", ".", "BIND(", " AS ?x)", "FILTER(", ")", "(",
    "INSERT DATA", "DELETE", "LOAD <URL>", "FROM <urn:cortex:graph:agent:ui>", "FROM NAMED <urn:cortex:graph:agent:ui>",
    "DEFINE", ";", "?c", "'x'", '"x"', "1", "<<", ">>", "\\U00110000", "\\uD800",
]
TEMPLATE = f'SELECT ?c WHERE {{ BIND("A" AS ?x) SERVICE <URL> {{ GRAPH ?g {{ ?m {CONTENT} ?c }} }} }} B AS ?y) }}'


@st.composite
def hostile_queries(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=25)))
    pieces = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=0, max_size=4))
    return TEMPLATE.replace("A", "".join(pieces[:2])).replace("B", "".join(pieces[2:]))


@pytest.fixture(scope="module")
def fuzz_cx(tmp_path_factory) -> Iterator[Cortex]:
    cx = team(tmp_path_factory.mktemp("fuzz") / "store")
    yield cx
    cx.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=hostile_queries())
def test_fuzz_the_engine_receives_exactly_the_judged_text_and_nothing_forbidden(fuzz_cx, recorder, query):
    from rdflib.plugins.sparql.parser import parseQuery

    query = query.replace("URL", recorder.url)
    store = fuzz_cx._memories.store
    received: list[str] = []
    engine = store.query

    def spy(text, *args, **kwargs):
        received.append(text)
        return engine(text, *args, **kwargs)

    store.query = spy
    graphs = [f"urn:cortex:graph:{g}" for g in ("agent:api", "team:backend", "swarm")]
    try:
        result = fuzz_cx.sparql(query, agent="api", timeout=10)
    except InvalidInputError:
        result = None
    finally:
        store.query = engine
    assert recorder.paths == []
    if not received:
        return
    text, = received
    # what ran was judged: judging it again accepts it and changes nothing
    assert sparql.prepare(text, dataset=graphs).text == text
    # no SERVICE, no update, no comment, no escape, no dataset but the agent's, read by another parser too
    assert "\\u" not in text and "\\U" not in text
    lines = text.splitlines()
    words = {line.upper() for line in lines if line[:1].isalpha()}
    assert not words & {"SERVICE", "INSERT", "DELETE", "LOAD", "DEFINE", "PREFIX"}
    clauses = [(lines[i + 1] == "NAMED", lines[i + 2] if lines[i + 1] == "NAMED" else lines[i + 1])
               for i, line in enumerate(lines) if line == "FROM"]
    assert sorted(clauses) == sorted((named, f"<{g}>") for named in (False, True) for g in graphs)
    try:
        tree = parseQuery(text)
    except Exception:  # rdflib reads less than Oxigraph does
        tree = None
    if tree is not None:
        assert "ServiceGraphPattern" not in repr(tree)
    if result is not None:
        assert not values(result) & SECRET


def test_a_judged_query_is_a_fixpoint():
    prepared = sparql.prepare(attack("http://127.0.0.1:9/q"), dataset=["urn:cortex:graph:agent:api"])
    assert "SERVICE" not in prepared.text.upper().split()
    assert sparql.prepare(prepared.text, dataset=["urn:cortex:graph:agent:api"]).text == prepared.text


# -- finding 2: dataset confinement must not depend on the server ---------------------------------------------


def rdflib_endpoint(tmp_path: Path, *, ignore_dataset: bool):
    """A real rdflib-endpoint server (rdflib's SPARQL engine behind FastAPI) on loopback, holding a store exported
    from Cortex; ``ignore_dataset``: its processor drops the query's FROM clauses too (it ignores the protocol's
    dataset in any case)."""
    import socket
    import subprocess
    import sys
    import textwrap
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = tmp_path / "endpoint.py"
    script.write_text(textwrap.dedent(f"""
        import uvicorn
        from rdflib import Dataset
        from rdflib.plugins.sparql.processor import SPARQLProcessor
        from rdflib_endpoint import SparqlEndpoint

        class Unconfined(SPARQLProcessor):
            def query(self, strOrQuery, initBindings={{}}, initNs={{}}, base=None, DEBUG=False):
                from rdflib.plugins.sparql.algebra import translateQuery
                from rdflib.plugins.sparql.evaluate import evalQuery
                from rdflib.plugins.sparql.parser import parseQuery
                query = translateQuery(parseQuery(strOrQuery), base, initNs) if isinstance(strOrQuery, str) \
                    else strOrQuery
                query.algebra["datasetClause"] = None  # every graph, whatever the query names
                return evalQuery(self.graph, query, initBindings, base)

        ds = Dataset()
        ds.parse({str(tmp_path / "data.trig")!r}, format="trig")
        app = SparqlEndpoint(graph=ds, enable_update=True, path="/sparql",
                             processor=Unconfined(ds) if {ignore_dataset!r} else "sparql")
        uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning")
    """))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/sparql", params={"query": "ASK {}"}, timeout=1).status_code < 500:
                return process, f"sparql+http://127.0.0.1:{port}/sparql"
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise RuntimeError(process.stderr.read().decode())
        time.sleep(0.1)
    raise RuntimeError("rdflib-endpoint did not start")


@pytest.mark.parametrize("ignore_dataset", [False, True], ids=["honours-from", "ignores-everything"])
def test_an_agent_query_on_a_server_that_ignores_the_protocol_dataset(tmp_path, ignore_dataset):
    """rdflib-endpoint 0.6.3 ignores default-graph-uri/named-graph-uri: Cortex writes the agent's dataset into the
    query, which confines it; a server that ignores that too is refused for agents (admins still query)."""
    with team(tmp_path / "source") as source:
        with open(tmp_path / "data.trig", "wb") as out:
            source.export(out, all=True)
    process, location = rdflib_endpoint(tmp_path, ignore_dataset=ignore_dataset)
    try:
        with Cortex.open(location, embeddings=None, state_dir=tmp_path / "state") as cx:
            cx.agents.register("api", settings=AgentSettings(teams=("backend",)))
            cx.agents.register("ui", settings=AgentSettings(teams=("frontend",)))
            every_graph = "SELECT DISTINCT ?g ?c WHERE { GRAPH ?g { ?m <urn:cortex:agentmem:content> ?c } }"
            assert {"ui private note", "api private note"} <= values(cx.sparql(every_graph))  # an admin
            if ignore_dataset:
                with pytest.raises(PermissionDeniedError, match="reads every graph"):
                    cx.sparql(every_graph, agent="api")
            else:
                seen = values(cx.sparql(every_graph, agent="api"))
                assert "api private note" in seen and not seen & SECRET
    finally:
        process.kill()
        process.wait()


def test_substitutions_are_judged_with_the_query(team_cx):
    rows = team_cx.sparql(f"SELECT ?c WHERE {{ ?m {CONTENT} ?c }}", {"c": ox.Literal("api private note")},
                          agent="api")
    assert [r["c"].value for r in rows] == ["api private note"]
    with pytest.raises(InvalidInputError, match="does not contain the variable"):
        team_cx.sparql(f"SELECT ?c WHERE {{ ?m {CONTENT} ?c }}", {"zz": ox.Literal("x")}, agent="api")
