"""The storage contract (:class:`cortex.store.base.MemoryStore`), run against every backend: the same
behaviour whichever store a location selects."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from cortex.errors import InvalidInputError, StoreError, VersionConflictError
from cortex.model import Memory, MemoryType, Scope
from cortex.store import open_store
from cortex.store.base import MemoryStore
from cortex.vocab import Vocabulary
from tests.conftest import remote_location

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
A, B = Scope.agent("a"), Scope.agent("b")


def memory(i: int, agent: str = "a", **fields) -> Memory:
    values = dict(id=f"m{i:04d}", agent=agent, content=f"content {i}", type=MemoryType.INSIGHT, project="global",
                  confidence=0.7, usage_count=0, created_at=T0, last_used_at=T0)
    values.update(fields)
    return Memory(**values)


@pytest.fixture(params=["memory", "disk", pytest.param("oxigraph", marks=pytest.mark.server),
                        pytest.param("virtuoso", marks=pytest.mark.server)])
def store(request, tmp_path):
    if request.param in ("oxigraph", "virtuoso"):
        location = remote_location(request, request.param)
    else:
        location = None if request.param == "memory" else tmp_path / "store"
    backend = open_store(location, Vocabulary())
    yield backend
    backend.close()


def test_backends_satisfy_the_protocol(store):
    assert isinstance(store, MemoryStore)


def test_add_then_read_back_every_field(store):
    m = memory(1, type=MemoryType.DECISION, project="p", confidence=0.25, usage_count=3,
               last_used_at=T0 + timedelta(hours=1), content='quotes " } > \n and <tags>')
    store.add(A, [m])
    assert store.get_many(A, [m.id, "missing"]) == [m, None]
    assert store.contents(A, ["missing", m.id]) == [None, m.content]
    assert list(store.iter_memories(A)) == [m]
    for read in (*store.get_many(A, [m.id]), *store.iter_memories(A)):  # complete, valid models (built trusted)
        assert set(read.__dict__) == set(Memory.model_fields) and Memory.model_validate(read.model_dump()) == read
    assert store.count(A) == 1 and store.count(B) == 0
    assert store.find_content(A, m.content, "p") == [m.id]
    assert store.find_content(A, m.content, "other") == []
    assert store.scopes() == [A]


def test_scopes_are_isolated(store):
    store.add(A, [memory(1)])
    store.add(B, [memory(1, agent="b")])
    store.delete(A, ["m0001"])
    assert store.get_many(A, ["m0001"]) == [None]
    assert store.get_many(B, ["m0001"])[0] is not None


def test_bulk_add_is_complete(store):
    batch = [memory(i) for i in range(2500)]
    store.add(A, batch)
    assert store.count(A) == 2500
    assert {m.id for m in store.iter_memories(A)} == {m.id for m in batch}


def test_touch_is_atomic_under_threads(store):
    store.add(A, [memory(1)])
    later = T0 + timedelta(days=1)
    threads = [threading.Thread(target=lambda: [store.touch(A, ["m0001"], later) for _ in range(10)])
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = store.get_many(A, ["m0001"])[0]
    assert got.usage_count == 80 and got.last_used_at == later
    rows = store.query("SELECT ?u WHERE { GRAPH ?g { ?m <urn:cortex:agentmem:usageCount> ?u } }")
    if not store.shared:
        assert [r["u"].value for r in rows] == ["80"]
    else:  # servers do not serialise read-modify-write: each use is a triple of its own, added to the count
        assert [r["u"].value for r in rows] == ["0"]
        uses = store.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?m <urn:cortex:agentmem:used> ?u } }")
        assert [r["n"].value for r in uses] == ["80"]


def plant(path, quads, remove=()) -> None:
    """Write triples into a closed on-disk store with plain pyoxigraph: data written by another tool."""
    import gc

    import pyoxigraph

    raw = pyoxigraph.Store(str(path))
    for quad in remove:
        raw.remove(quad)
    raw.extend(quads)
    raw.flush()
    del raw
    gc.collect()


XSD = "http://www.w3.org/2001/XMLSchema#"


def test_touch_that_cannot_increment_deletes_nothing(tmp_path):
    """A count the store cannot add one to (here, beyond 64 bits) stays as it is: the touch update never
    deletes without writing (issue: touch on usage_count 2**63-1 destroyed the memory)."""
    path = tmp_path / "store"
    store = open_store(path, Vocabulary())
    store.add(A, [memory(1)])
    store.close()
    v = Vocabulary()
    node, graph, predicate = v.memory(A, "m0001"), v.graph(A), v.predicate("usageCount")
    plant(path, [Quad(node, predicate, Literal(str(2**63 - 1), datatype=NamedNode(XSD + "integer")), graph)],
          remove=[Quad(node, predicate, Literal("0", datatype=NamedNode(XSD + "integer")), graph)])
    store = open_store(path, Vocabulary())
    try:
        store.touch(A, ["m0001"], T0 + timedelta(days=1))
        rows = list(store.query("SELECT * WHERE { GRAPH ?g { ?m ?p ?o } }", {"m": node}))
        assert len(rows) == 9
        assert store.get_many(A, ["m0001"])[0].usage_count == 2**63 - 1
    finally:
        store.close()


def test_reading_is_tolerant_of_missing_optional_fields(tmp_path):
    """Only content is required: fields added later read as their defaults on subjects written earlier."""
    path = tmp_path / "store"
    open_store(path, Vocabulary()).close()
    v = Vocabulary()
    graph, node = v.graph(A), v.memory(A, "old1")
    plant(path, [
        Quad(node, NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), v.memory_class, graph),
        Quad(node, v.predicate("content"), Literal("an old memory"), graph),
        Quad(node, v.predicate("createdAt"), Literal("2020-01-01T00:00:00Z", datatype=NamedNode(XSD + "dateTime")),
             graph),
    ])
    store = open_store(path, Vocabulary())
    got = store.get_many(A, ["old1"])[0]
    assert (got.content, got.type, got.project, got.confidence, got.usage_count) == (
        "an old memory", MemoryType.INSIGHT, "global", 0.7, 0)
    assert got.created_at == got.last_used_at == datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert [m.id for m in store.iter_memories(A)] == ["old1"]
    store.close()
    # a malformed value makes the subject unreadable rather than silently different
    plant(path, [Quad(node, v.predicate("type"), Literal("no-such-type"), graph)])
    store = open_store(path, Vocabulary())
    try:
        assert store.get_many(A, ["old1"]) == [None]
        assert store.count(A) == 1
    finally:
        store.close()


def test_query_is_read_only_and_reports_syntax_errors(store):
    store.add(A, [memory(1)])
    with pytest.raises(InvalidInputError, match="query"):
        store.query("DELETE WHERE { ?s ?p ?o }")
    with pytest.raises(InvalidInputError, match="query"):
        store.query("SELECT nonsense")
    assert store.count(A) == 1
    assert bool(store.query("ASK { GRAPH ?g { ?s ?p ?o } }"))


def test_hostile_strings_stay_literals(store):
    hostile = ['" . } ; DROP ALL ; #', "} } INSERT DATA { <urn:x> <urn:y> <urn:z> } #", "\\u0022 \\n >"]
    store.add(A, [memory(i, content=text, project=text) for i, text in enumerate(hostile)])
    assert [store.find_content(A, text, text) for text in hostile] == [["m0000"], ["m0001"], ["m0002"]]
    assert store.count(A) == 3


def test_every_write_logs_a_numbered_change_with_its_ids(store):
    assert store.last_change(A) is None and store.changes(A, 0) == []
    first = store.add(A, [memory(1), memory(2)])
    second = store.touch(A, ["m0001"], T0)
    third = store.delete(A, ["m0002"])
    other = store.add(B, [memory(1, agent="b")])
    assert [c.seq for c in (first, second, third, other)] == [1, 2, 3, 1]
    assert len({first.token, second.token, third.token, other.token}) == 4
    assert [(c.seq, c.token, c.ids) for c in store.changes(A, 0)] == [
        (1, first.token, ("m0001", "m0002")), (2, second.token, ("m0001",)), (3, third.token, ("m0002",))]
    assert [c.seq for c in store.changes(A, 2)] == [3]
    assert store.last_change(A).seq == 3 and store.change(A, 2).token == second.token
    store.compact(A, 3)  # the records before 3 go, the latest stays
    assert [c.seq for c in store.changes(A, 0)] == [3] and store.change(A, 1) is None
    assert store.add(A, [memory(3)]).seq == 4
    assert store.scopes() == [A, B]


def test_a_large_write_logs_bulk_instead_of_every_id(store, monkeypatch):
    monkeypatch.setattr("cortex.store.rdf.MAX_LOGGED_IDS", 10)
    change = store.add(A, [memory(i) for i in range(11)])
    assert [(c.seq, c.token, c.ids) for c in store.changes(A, 0)] == [(1, change.token, None)]


def test_the_log_is_not_a_memory_graph(store):
    store.add(A, [memory(1)])
    store.delete(A, ["m0001"])
    assert store.count(A) == 0 and list(store.iter_memories(A)) == []
    rows = store.query("SELECT ?s WHERE { GRAPH ?g { ?s ?p <urn:cortex:agent:a:memory:m0001> } }")
    assert list(rows) == []  # the log names ids as strings: no edge to a forgotten memory


def test_write_replaces_only_while_the_store_holds_the_version_read(store):
    m = memory(1)
    store.add(A, [m])
    v2 = m.model_copy(update={"content": "second", "version": 2})
    store.write(A, [], [(m, v2, True)])
    assert store.get_many(A, [m.id])[0].content == "second"
    assert [v.content for v in store.versions(A, m.id)] == ["content 1"]
    # a writer that read version 1 (another process on a shared store) changes nothing now: the whole write
    # is refused, its additions and deletions included, and nothing is logged
    stale = m.model_copy(update={"content": "stale", "version": 2})
    before = store.last_change(A)
    with pytest.raises(VersionConflictError) as err:
        store.write(A, [memory(2)], [(m, stale, True)])
    assert (err.value.memory_id, err.value.expected, err.value.actual) == (m.id, 1, 2)
    with pytest.raises(VersionConflictError) as err:
        store.write(A, [], [(memory(3), memory(3), False)], deletes=[m.id])  # gone: version 0
    assert err.value.actual == 0 and "no longer exists" in str(err.value)
    assert store.last_change(A) == before
    assert store.get_many(A, [m.id, "m0002"]) == [store.get_many(A, [m.id])[0], None]
    assert store.get_many(A, [m.id])[0].content == "second"
    assert len(store.versions(A, m.id)) == 1


@pytest.mark.server
@pytest.mark.parametrize("kind", ["oxigraph", "virtuoso"])
def test_a_replacement_of_what_another_process_changed_is_refused_whole(kind, request):
    """Two processes read version 1; one updates; the other's replacement of what it read is refused (it checks,
    holding its claim, that the store holds exactly what it read) and adds nothing."""
    location = remote_location(request, kind)
    a, b = open_store(location, Vocabulary()), open_store(location, Vocabulary())
    m = memory(1)
    a.add(A, [m])
    a.write(A, [], [(m, m.model_copy(update={"content": "a's update", "version": 2}), True)])
    with pytest.raises(VersionConflictError) as err:
        b.write(A, [memory(2)], [(m, m.model_copy(update={"content": "b's update", "version": 2}), True)])
    assert err.value.actual == 2
    assert a.get_many(A, [m.id, "m0002"]) == [a.get_many(A, [m.id])[0], None]
    assert a.get_many(A, [m.id])[0].content == "a's update"
    # a validation keeps the version: a supersession of what was read before it is refused all the same
    validated = a.write(A, [], [(a.get_many(A, [m.id])[0], a.get_many(A, [m.id])[0].model_copy(
        update={"confidence": 0.75}), False)])
    assert validated is not None
    before = a.get_many(A, [m.id])[0]
    stale = before.model_copy(update={"confidence": 0.7})
    with pytest.raises(VersionConflictError):
        b.write(A, [], [(stale, stale.model_copy(update={"superseded_by": "m0003"}), False)])
    a.close()
    b.close()


@pytest.mark.parametrize("kind", [pytest.param("oxigraph", marks=pytest.mark.server),
                                  pytest.param("virtuoso", marks=pytest.mark.server)])
def test_a_claimed_memory_waits_for_its_writer_and_a_dead_writers_claim_expires(kind, request, monkeypatch):
    from datetime import timedelta

    from cortex.model import utcnow
    from cortex.store import remote

    location = remote_location(request, kind)
    a = open_store(location, Vocabulary())
    m = memory(1)
    a.add(A, [m])
    server = request.getfixturevalue(f"{kind}_server")
    claim = f"<urn:cortex:claim:{A.key}:{m.id}>"
    held = (utcnow() + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    server.update(f'INSERT DATA {{ GRAPH <urn:cortex:graph:log> {{ {claim} <urn:cortex:agentmem:claim> '
                  f'"{held} other" }} }}')
    monkeypatch.setattr(remote.claims, "CLAIM_LEASE", 1.0)  # wait at most ~1 s (plus the request time-out) for it
    a.endpoint = remote.Endpoint(**{**a.endpoint.__dict__, "timeout": 0.5})
    with pytest.raises(StoreError, match="stayed claimed"):
        a.write(A, [], [(m, m.model_copy(update={"content": "mine", "version": 2}), True)])
    assert a.get_many(A, [m.id])[0].content == m.content
    dead = (utcnow() - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    server.update(f'DELETE DATA {{ GRAPH <urn:cortex:graph:log> {{ {claim} <urn:cortex:agentmem:claim> '
                  f'"{held} other" }} }} ; INSERT DATA {{ GRAPH <urn:cortex:graph:log> {{ {claim} '
                  f'<urn:cortex:agentmem:claim> "{dead} other" }} }}')
    a.write(A, [], [(m, m.model_copy(update={"content": "mine", "version": 2}), True)])
    assert a.get_many(A, [m.id])[0].content == "mine"
    left = server.query(f"SELECT ?c WHERE {{ GRAPH <urn:cortex:graph:log> {{ {claim} ?p ?c }} }}")
    assert left["results"]["bindings"] == []  # the dead claim was removed, and the writer released its own
    a.close()


def test_quads_written_as_sparql_text_keep_every_kind_of_term():
    """The SPARQL text the stores send for quads (``MemoryCodec.triples``) reads back as the same quads: hostile
    literals, language tags and RDF 1.2 triple terms, nested (whose ``str`` is not SPARQL)."""
    from pyoxigraph import Store, Triple

    from cortex.store.rdf import MemoryCodec

    g = NamedNode("urn:g")
    inner = Triple(NamedNode("urn:a"), NamedNode("urn:b"), Literal('c "} >'))
    quads = [Quad(NamedNode("urn:s"), NamedNode("urn:p"), Literal('quotes " \\ } > \n \u0000 end'), g),
             Quad(NamedNode("urn:s"), NamedNode("urn:p"), Literal("chat", language="fr"), g),
             Quad(NamedNode("urn:s"), NamedNode("urn:p"), inner, g),
             Quad(NamedNode("urn:s"), NamedNode("urn:q"), Triple(NamedNode("urn:x"), NamedNode("urn:y"), inner), g)]
    store = Store()
    store.update(f"INSERT DATA {{ GRAPH {g} {{ {MemoryCodec.triples(quads)} }} }}")
    assert set(store) == set(quads)
