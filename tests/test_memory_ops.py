"""store / get / touch / forget / stats / prune on a real on-disk store, and persistence."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from pyoxigraph import NamedNode

from cortex import Cortex, MemoryNotFoundError, MemoryType
from tests.conftest import reopen


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
    store = cx._store._store
    subject = cx._store.vocab.memory("reviewer", m.id)
    counts = list(store.quads_for_pattern(subject, cx._store.vocab.pred["usageCount"], None, None))
    assert [q.object.value for q in counts] == ["20"]
    assert len(list(store.quads_for_pattern(subject, cx._store.vocab.pred["lastUsedAt"], None, None))) == 1


def test_store_level_touch_is_atomic_without_the_facade_lock(cx, clock):
    # the facade serialises calls; the store's single DELETE/INSERT must be atomic on its own
    m = cx.store("reviewer", "hammered")
    threads = [threading.Thread(target=lambda: [cx._store.touch("reviewer", [m.id], clock.now) for _ in range(10)])
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cx._store.get("reviewer", m.id).usage_count == 80
    subject = cx._store.vocab.memory("reviewer", m.id)
    assert len(list(cx._store._store.quads_for_pattern(subject, cx._store.vocab.pred["usageCount"], None, None))) == 1


def test_recall_reads_only_the_hits_from_the_store(cx, monkeypatch):
    stored = cx.store_many("reviewer", [{"content": f"item {i} {'even' if i % 2 else 'odd'}"} for i in range(500)])
    cx.recall("reviewer", "warm")  # loads the index
    asked: list[str] = []
    real_contents = cx._store.contents

    def spy(agent, ids):
        asked.extend(ids)
        return real_contents(agent, ids)

    def forbidden(*args, **kwargs):
        raise AssertionError("recall must not scan the store")

    monkeypatch.setattr(cx._store, "contents", spy)
    monkeypatch.setattr(cx._store, "iter_memories", forbidden)
    monkeypatch.setattr(cx._store, "get_many", forbidden)
    hits = cx.recall("reviewer", "odd", limit=5)
    assert len(hits) == 5 and asked == [m.id for m in hits]
    assert {m.id for m in stored} >= set(asked)


def test_forget_removes_every_triple(cx):
    m = cx.store("reviewer", "forget me")
    keep = cx.store("reviewer", "keep me")
    assert cx.forget("reviewer", m.id) is True
    assert cx.forget("reviewer", m.id) is False
    assert cx.get("reviewer", m.id) is None
    subject = cx._store.vocab.memory("reviewer", m.id)
    assert list(cx._store._store.quads_for_pattern(subject, None, None, None)) == []
    assert list(cx._store._store.quads_for_pattern(None, None, subject, None)) == []
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
    assert cx._store.count("reviewer") == 2500
    assert cx.get("reviewer", stored[1234].id).content == "bulk memory 1234"
    assert [m.content for m in cx.recall("reviewer", "memory 2499")] == ["bulk memory 2499"]


def test_everything_persists_across_reopen(cx, store_path, clock):
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
    store = cx._store._store
    subject = NamedNode(f"urn:cortex:agent:reviewer:memory:{m.id}")
    graph = NamedNode("urn:cortex:graph:agent:reviewer")
    quads = list(store.quads_for_pattern(subject, None, None, None))
    assert {q.graph_name for q in quads} == {graph}
    by_pred = {q.predicate.value: q.object for q in quads}
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


def test_custom_namespace(tmp_path):
    with Cortex.open(tmp_path / "s", ns="https://example.org/mem") as cx:
        cx.agents.register("a")
        m = cx.store("a", "namespaced")
        subject = NamedNode(f"https://example.org/mem:agent:a:memory:{m.id}")
        assert len(list(cx._store._store.quads_for_pattern(subject, None, None, None))) == 9
        assert cx.recall("a", "namespaced")[0].id == m.id


def test_in_memory_store(tmp_path):
    with Cortex.open(None) as cx:
        cx.agents.register("a")
        m = cx.store("a", "ephemeral")
        assert cx.recall("a", "ephem")[0].id == m.id
        assert cx.store_path is None


def test_closed_cortex_refuses_work(store_path):
    cx = Cortex.open(store_path)
    cx.agents.register("a")
    cx.close()
    cx.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        cx.store("a", "x")
