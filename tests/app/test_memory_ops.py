"""store / get / touch / forget / stats / prune, the RDF layout, and persistence on a real on-disk store."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from pyoxigraph import NamedNode

from cortex import Cortex, MemoryNotFoundError, MemoryType
from cortex.store import open_store
from cortex.vocab import Vocabulary
from tests.conftest import reopen, triples_of

USAGE = "urn:cortex:agentmem:usageCount"
LAST_USED = "urn:cortex:agentmem:lastUsedAt"


def test_store_applies_defaults_and_get_returns_it(cx, clock):
    m = cx.store("reviewer", "Always check for null pointers")
    assert (m.type, m.project, m.confidence, m.usage_count) == (MemoryType.INSIGHT, "global", 0.7, 0)
    assert m.created_at == m.last_used_at == clock.now
    assert cx.get("reviewer", m.id) == m


def test_store_keeps_given_fields(cx):
    m = cx.store("reviewer", "Use ruff", type="convention", project="mayros", confidence=0.95)
    got = cx.get("reviewer", m.id)
    assert (got.type, got.project, got.confidence) == (MemoryType.CONVENTION, "mayros", 0.95)


def test_get_unknown_or_malformed_id_is_none(cx):
    assert cx.get("reviewer", "doesnotexist") is None
    assert cx.get("reviewer", "bad id with spaces") is None
    assert cx.get("reviewer", "x:y/../z") is None


def test_memories_are_isolated_per_agent(cx):
    m = cx.store("reviewer", "reviewer secret")
    assert cx.get("planner", m.id) is None
    assert cx.recall("planner", "secret") == []
    assert cx.forget("planner", m.id) is False
    assert cx.get("reviewer", m.id) is not None


def test_touch_increments_usage_and_sets_last_used(cx, clock):
    m = cx.store("reviewer", "touch me")
    clock.advance(hours=2)
    touched = cx.touch("reviewer", m.id)
    assert touched.usage_count == 1
    assert touched.last_used_at == clock.now
    assert touched.created_at == m.created_at
    assert cx.get("reviewer", m.id) == touched


def test_touch_unknown_id_raises(cx):
    with pytest.raises(MemoryNotFoundError, match="nope"):
        cx.touch("reviewer", "nope")
    with pytest.raises(MemoryNotFoundError):
        cx.touch("reviewer", "bad id!")


def test_concurrent_touches_are_atomic(cx):
    m = cx.store("reviewer", "popular memory")
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            cx.touch("reviewer", m.id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cx.get("reviewer", m.id).usage_count == 20
    triples = triples_of(cx, "reviewer", m.id)
    uses = [o for p, o in triples if p == "urn:cortex:agentmem:used"]
    if cx.store_shared:  # a shared store records each use as its own triple (docs/scale-out.md)
        assert [o for p, o in triples if p == USAGE] == ["0"] and len(set(uses)) == 20
    else:
        assert [o for p, o in triples if p == USAGE] == ["20"] and uses == []
    assert len([o for p, o in triples if p == LAST_USED]) == 1


class Spy:
    """A :class:`~cortex.store.base.MemoryStore` that records which reads reach the real one."""

    def __init__(self, inner, forbidden=()) -> None:
        self.inner, self.forbidden, self.contents_asked = inner, set(forbidden), []

    def __getattr__(self, name):
        if name in self.forbidden:
            raise AssertionError(f"{name} must not be called")
        return getattr(self.inner, name)

    def contents(self, scope, ids):
        self.contents_asked.extend(ids)
        return self.inner.contents(scope, ids)


def test_recall_reads_nothing_from_an_embedded_store(clock):
    """The index holds the content too: a recall's hits come from it, with no read of the store per hit (a shared
    store is still asked for the hits' content)."""
    spy = Spy(open_store(None, Vocabulary()))
    with Cortex(spy, clock=clock) as cx:
        cx.agents.register("reviewer")
        stored = cx.store_many("reviewer", [{"content": f"item {i} {'even' if i % 2 else 'odd'}"} for i in range(500)])
        cx.recall("reviewer", "warm")  # loads the index
        spy.forbidden = {"iter_memories", "get_many"}
        spy.contents_asked.clear()
        hits = cx.recall("reviewer", "odd", limit=5)
        assert len(hits) == 5 and spy.contents_asked == []
        by_id = {m.id: m for m in stored}
        assert all(h.content == by_id[h.id].content and h.content.endswith("odd") for h in hits)


def test_forget_removes_every_triple(cx):
    m = cx.store("reviewer", "forget me")
    keep = cx.store("reviewer", "keep me")
    assert cx.forget("reviewer", m.id) is True
    assert cx.forget("reviewer", m.id) is False
    assert cx.get("reviewer", m.id) is None
    assert triples_of(cx, "reviewer", m.id) == []
    assert [x.id for x in cx.recall("reviewer", "me")] == [keep.id]


def test_stats_always_has_four_keys(cx):
    assert cx.stats("reviewer") == {"pattern": 0, "convention": 0, "insight": 0, "decision": 0}
    cx.store("reviewer", "a", type="pattern")
    cx.store("reviewer", "b", type="pattern")
    cx.store("reviewer", "c", type="decision")
    assert cx.stats("reviewer") == {"pattern": 2, "convention": 0, "insight": 0, "decision": 1}


def test_prune_by_confidence_is_strictly_below(cx):
    low = cx.store("reviewer", "low", confidence=0.29)
    edge = cx.store("reviewer", "edge", confidence=0.3)
    high = cx.store("reviewer", "high", confidence=0.9)
    assert cx.prune("reviewer", min_confidence=0.3, dry_run=True) == 1
    assert cx.get("reviewer", low.id) is not None
    assert cx.prune("reviewer", min_confidence=0.3) == 1
    assert cx.get("reviewer", low.id) is None
    assert cx.get("reviewer", edge.id) is not None and cx.get("reviewer", high.id) is not None


def test_prune_by_age_uses_last_used(cx, clock):
    old = cx.store("reviewer", "old but used")
    stale = cx.store("reviewer", "stale")
    clock.advance(days=20)
    cx.touch("reviewer", old.id)
    clock.advance(days=20)
    fresh = cx.store("reviewer", "fresh")
    assert cx.prune("reviewer", min_confidence=0.0, max_age="30d") == 1
    assert cx.get("reviewer", stale.id) is None
    assert cx.get("reviewer", old.id) is not None and cx.get("reviewer", fresh.id) is not None
    assert cx.prune("reviewer", min_confidence=0.0, max_age=timedelta(days=10)) == 1
    assert cx.get("reviewer", old.id) is None


def test_store_many_is_ordered_and_keeps_history(cx, clock):
    entries = [
        {"content": "first", "type": "decision", "usage_count": 7, "created_at": "2025-05-01T10:00:00Z"},
        {"content": "second", "last_used_at": "2025-06-01T00:00:00+02:00", "created_at": "2025-05-01T00:00:00Z"},
        {"content": "third"},
    ]
    stored = cx.store_many("reviewer", entries)
    assert [m.content for m in stored] == ["first", "second", "third"]
    first = cx.get("reviewer", stored[0].id)
    assert (first.type, first.usage_count, first.created_at.isoformat()) == (
        MemoryType.DECISION, 7, "2025-05-01T10:00:00+00:00")
    assert first.last_used_at == first.created_at
    assert cx.get("reviewer", stored[1].id).last_used_at.isoformat() == "2025-05-31T22:00:00+00:00"
    assert cx.get("reviewer", stored[2].id).created_at == clock.now


def test_store_many_large_batch_uses_bulk_path_and_is_complete(cx):
    stored = cx.store_many("reviewer", [{"content": f"bulk memory {i}"} for i in range(2500)])
    assert len({m.id for m in stored}) == 2500
    assert cx.count("reviewer") == 2500
    assert cx.index_status("reviewer").stored == 2500
    assert cx.get("reviewer", stored[1234].id).content == "bulk memory 1234"
    assert [m.content for m in cx.recall("reviewer", "memory 2499")] == ["bulk memory 2499"]


def test_everything_persists_across_reopen(disk_cx, store_path, clock):
    cx = disk_cx
    m = cx.store("reviewer", "persistent null pointer rule", type="pattern", project="p1", confidence=0.8)
    cx.touch("reviewer", m.id)
    gone = cx.store("reviewer", "gone soon")
    cx.forget("reviewer", gone.id)
    cx2 = reopen(cx, store_path, "reviewer")
    try:
        got = cx2.get("reviewer", m.id)
        assert got.model_dump() == cx2.recall("reviewer", "null")[0].model_dump()
        assert (got.usage_count, got.project, got.type) == (1, "p1", MemoryType.PATTERN)
        assert cx2.get("reviewer", gone.id) is None
        assert cx2.stats("reviewer")["pattern"] == 1
    finally:
        cx2.close()


def test_rdf_layout_follows_the_vocabulary(cx):
    m = cx.store("reviewer", "rdf check", type="pattern", confidence=0.5)
    subject = NamedNode(f"urn:cortex:agent:reviewer:memory:{m.id}")
    graph = NamedNode("urn:cortex:graph:agent:reviewer")
    quads = list(cx.sparql("SELECT * WHERE { GRAPH ?g { ?m ?p ?o } }", {"m": subject}))
    assert {q["g"] for q in quads} == {graph}
    by_pred = {q["p"].value: q["o"] for q in quads}
    xsd = "http://www.w3.org/2001/XMLSchema#"
    assert by_pred["http://www.w3.org/1999/02/22-rdf-syntax-ns#type"] == NamedNode("urn:cortex:agentmem:Memory")
    assert by_pred["urn:cortex:agentmem:agent"] == NamedNode("urn:cortex:agent:reviewer")
    assert by_pred["urn:cortex:agentmem:content"].value == "rdf check"
    assert by_pred["urn:cortex:agentmem:type"].value == "pattern"
    assert by_pred["urn:cortex:agentmem:project"].value == "global"
    assert by_pred["urn:cortex:agentmem:confidence"].datatype == NamedNode(xsd + "double")
    assert by_pred["urn:cortex:agentmem:usageCount"].datatype == NamedNode(xsd + "integer")
    assert by_pred["urn:cortex:agentmem:createdAt"].datatype == NamedNode(xsd + "dateTime")
    assert by_pred["urn:cortex:agentmem:lastUsedAt"].value.endswith("Z")
    assert len(quads) == 9


def test_custom_namespace():
    with Cortex.open(None, ns="https://example.org/mem") as cx:
        cx.agents.register("a")
        m = cx.store("a", "namespaced")
        subject = NamedNode(f"https://example.org/mem:agent:a:memory:{m.id}")
        graph = NamedNode("https://example.org/mem:graph:agent:a")
        assert len(list(cx.sparql("SELECT * WHERE { GRAPH ?g { ?m ?p ?o } }", {"m": subject, "g": graph}))) == 9
        assert cx.recall("a", "namespaced")[0].id == m.id


def test_in_memory_store():
    with Cortex.open(None) as cx:
        cx.agents.register("a")
        m = cx.store("a", "ephemeral")
        assert cx.recall("a", "ephem")[0].id == m.id
        assert cx.store_path is None


def test_closed_cortex_refuses_work(store_path):
    cx = Cortex.open(store_path, embeddings=None)
    cx.agents.register("a")
    cx.close()
    cx.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        cx.store("a", "x")
