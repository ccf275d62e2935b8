"""The lifecycle of a memory (DESIGN.md section 10, docs/lifecycle.md): sources and time to live, tags and
metadata, update with history, supersession with valid time, validation and decay, listing. On a real on-disk
store (``disk_cx``) with a settable clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pyoxigraph import NamedNode

from cortex import (
    InvalidInputError,
    MemoryNotFoundError,
    Reranking,
    Source,
    VersionConflictError,
)
from cortex.agents import AgentSettings
from cortex.lifecycle import DEFAULT_HALF_LIFE
from cortex.validation import MAX_METADATA_BYTES
from tests.conftest import memory_iri, reopen, triples_of

A = "reviewer"
PROV = "http://www.w3.org/ns/prov#"


def ids(memories) -> list[str]:
    return [m.id for m in memories]


# -- sources and time to live ------------------------------------------------------------------------


@pytest.mark.parametrize("source, days", [("manual", None), ("agent_end", None), ("import", None),
                                          ("injected", None), ("task_completion", 7), ("session_summary", 3),
                                          ("file_index", 30)])
def test_each_source_has_its_default_time_to_live(disk_cx, clock, source, days):
    m = disk_cx.store(A, "a note", source=source)
    assert m.source == Source(source)
    assert m.expires_at == (clock.now + timedelta(days=days) if days is not None else None)
    assert disk_cx.get(A, m.id).expires_at == m.expires_at


def test_ttl_overrides_the_source(disk_cx, clock):
    assert disk_cx.store(A, "x", ttl="12h").expires_at == clock.now + timedelta(hours=12)
    assert disk_cx.store(A, "y", ttl=timedelta(minutes=5)).expires_at == clock.now + timedelta(minutes=5)
    assert disk_cx.store(A, "z", source="task_completion", ttl="never").expires_at is None


def test_ttl_defaults_come_from_frontmatter_and_environment(store_path, clock, monkeypatch):
    from tests.conftest import open_agents

    monkeypatch.setenv("CORTEX_TTL", "task_completion=2d,manual=10d")
    cx = open_agents(store_path, clock=clock)
    cx.agents.register("custom", settings=AgentSettings(ttl={"task_completion": timedelta(days=1)}))
    cx.agents.register("plain")
    try:
        assert cx.store("custom", "x", source="task_completion").expires_at == clock.now + timedelta(days=1)
        assert cx.store("custom", "y").expires_at == clock.now + timedelta(days=10)  # the environment's
        assert cx.store("plain", "x", source="task_completion").expires_at == clock.now + timedelta(days=2)
    finally:
        cx.close()


def test_expired_memories_leave_every_read_but_get_until_purged(disk_cx, clock):
    note = disk_cx.store(A, "flaky test in ci", source="task_completion")
    kept = disk_cx.store(A, "flaky tests are retried once")
    clock.advance(days=7)  # expires_at <= now: expired
    assert ids(disk_cx.recall(A, "flaky")) == [kept.id]
    assert ids(h.memory for h in disk_cx.search(A, "flaky test", mode="bm25")) == [kept.id]
    assert ids(disk_cx.list_memories(A).items) == [kept.id]
    assert "flaky test in ci" not in disk_cx.agent_start(A, "flaky test")
    assert "flaky test in ci" not in disk_cx.agent_start(A)
    got = disk_cx.get(A, note.id)
    assert got is not None and got.expired(clock.now)
    assert set(ids(disk_cx.recall(A, "flaky", include_expired=True))) == {note.id, kept.id}
    assert disk_cx.purge_expired(A) == 1
    assert disk_cx.get(A, note.id) is None and disk_cx.get(A, kept.id) is not None
    assert disk_cx.purge_expired() == 0


def test_purge_without_agent_covers_every_scope(disk_cx, clock):
    disk_cx.agents.register("lead", settings=AgentSettings(teams=("core",), lead=True))
    disk_cx.store("planner", "p", source="session_summary")
    disk_cx.store("lead", "t", source="session_summary", scope="team:core")
    disk_cx.store("lead", "s", source="session_summary", scope="swarm")
    disk_cx.store("lead", "stays")
    clock.advance(days=4)
    assert disk_cx.purge_expired() == 3
    assert [m.content for m in disk_cx.list_memories("lead", include_expired=True).items] == ["stays"]


def test_capture_at_agent_end_is_source_agent_end(disk_cx):
    (m,) = disk_cx.agent_end(A, "LEARNED: retries hide flaky tests")
    assert m.source is Source.AGENT_END and m.expires_at is None


def test_bad_sources_and_ttls_name_the_field_and_store_nothing(disk_cx):
    for kwargs, field in [({"source": "bogus"}, "source"), ({"ttl": "soon"}, "ttl"), ({"ttl": -1}, "ttl"),
                          ({"scope": "team:"}, "scope"), ({"scope": "elsewhere"}, "scope")]:
        with pytest.raises(InvalidInputError) as err:
            disk_cx.store(A, "x", **kwargs)
        assert err.value.field == field
    assert disk_cx.count(A) == 0


# -- tags and metadata -------------------------------------------------------------------------------


def test_tags_are_sorted_unique_and_filter_every_read(disk_cx):
    both = disk_cx.store(A, "cache keys include the tenant", tags=["perf", "cache", "perf"])
    one = disk_cx.store(A, "cache warmup on deploy", tags=["cache"])
    assert both.tags == ("cache", "perf") and disk_cx.get(A, both.id).tags == ("cache", "perf")
    assert set(ids(disk_cx.recall(A, "cache", tags=["cache"]))) == {both.id, one.id}
    assert ids(disk_cx.recall(A, "cache", tags=["cache", "perf"])) == [both.id]  # all of them
    assert ids(disk_cx.recall(A, tags=["nothing"])) == []
    assert ids(h.memory for h in disk_cx.search(A, "cache", tags=["perf"], mode="bm25")) == [both.id]
    assert ids(disk_cx.list_memories(A, tags=["perf"]).items) == [both.id]
    block = disk_cx.agent_start(A, tags=["perf"])
    assert "tenant" in block and "warmup" not in block


def test_tags_and_metadata_are_rdf_a_sparql_user_can_query(disk_cx):
    m = disk_cx.store(A, "x", tags=["b", "a"], metadata={"ticket": "ENG-1", "n": [1, 2]})
    tags = [o for p, o in triples_of(disk_cx, A, m.id) if p.endswith(":tag")]
    assert sorted(tags) == ["a", "b"]  # one triple per tag
    rows = list(disk_cx.sparql("SELECT ?m ?j WHERE { GRAPH ?g { ?m ?p ?j FILTER(isLiteral(?j) "
                               "&& DATATYPE(?j) = <http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON>) } }",
                               {"m": NamedNode(memory_iri(A, m.id))}))
    assert len(rows) == 1
    assert disk_cx.get(A, m.id).metadata == {"ticket": "ENG-1", "n": [1, 2]}


@pytest.mark.parametrize("kwargs, field", [
    ({"tags": ["Upper"]}, "tags"), ({"tags": ["has space"]}, "tags"), ({"tags": ["x" * 65]}, "tags"),
    ({"tags": [f"t{i}" for i in range(33)]}, "tags"), ({"tags": [1]}, "tags"),
    ({"metadata": {"x": "y" * MAX_METADATA_BYTES}}, "metadata"), ({"metadata": ["not", "an", "object"]}, "metadata"),
    ({"metadata": {"x": float("nan")}}, "metadata"),
])
def test_bad_tags_and_metadata_are_field_errors(disk_cx, kwargs, field):
    with pytest.raises(InvalidInputError) as err:
        disk_cx.store(A, "x", **kwargs)
    assert err.value.field == field
    assert disk_cx.count(A) == 0


# -- update and history ------------------------------------------------------------------------------


def test_update_changes_in_place_and_keeps_every_version(disk_cx, clock, store_path):
    m = disk_cx.store(A, "use redis for sessions", tags=["infra"], metadata={"a": 1})
    clock.advance(hours=1)
    v2 = disk_cx.update(A, m.id, content="use postgres for sessions", expected_version=1)
    assert (v2.id, v2.version, v2.updated_at, v2.created_at) == (m.id, 2, clock.now, m.created_at)
    assert v2.tags == ("infra",) and v2.metadata == {"a": 1}  # what was not given stays
    clock.advance(hours=1)
    v3 = disk_cx.update(A, m.id, tags=[], metadata={}, confidence=0.9)
    assert (v3.version, v3.tags, v3.metadata, v3.confidence) == (3, (), None, 0.9)
    # the index follows the content: old words are gone, new ones found
    assert ids(disk_cx.recall(A, "redis")) == [] and ids(disk_cx.recall(A, "postgres")) == [m.id]
    assert ids(disk_cx.recall(A, tags=["infra"])) == []
    cx = reopen(disk_cx, store_path, A, clock=clock)
    try:
        history = cx.history(A, m.id)
        assert [(h.version, h.content) for h in history] == [
            (1, "use redis for sessions"), (2, "use postgres for sessions"), (3, "use postgres for sessions")]
        assert history[0].tags == ("infra",) and history[0].metadata == {"a": 1}
        assert history[-1] == cx.get(A, m.id)
        revisions = [o for p, o in triples_of(cx, A, m.id) if p == PROV + "wasRevisionOf"]
        assert len(revisions) == 1 and revisions[0].endswith(f":{m.id}:2")
        versions = cx.sparql("SELECT ?m ?v WHERE { GRAPH ?g { ?v <http://purl.org/dc/terms/isVersionOf> ?m } }",
                             {"m": NamedNode(memory_iri(A, m.id))})
        assert len(list(versions)) == 2
        assert cx.index_status(A).rebuilds == 0
    finally:
        cx.close()


def test_a_stale_expected_version_changes_nothing(disk_cx):
    m = disk_cx.store(A, "first")
    disk_cx.update(A, m.id, content="second")
    with pytest.raises(VersionConflictError) as err:
        disk_cx.update(A, m.id, content="third", expected_version=1)
    assert err.value.field == "expected_version" and "version 2" in str(err.value)
    assert disk_cx.get(A, m.id).content == "second" and len(disk_cx.history(A, m.id)) == 2


def test_update_errors(disk_cx):
    m = disk_cx.store(A, "x")
    with pytest.raises(InvalidInputError, match="nothing to change"):
        disk_cx.update(A, m.id)
    with pytest.raises(MemoryNotFoundError):
        disk_cx.update(A, "0" * 28, content="y")
    for kwargs, field in [({"content": ""}, "content"), ({"type": "bogus"}, "type"), ({"confidence": 2}, "confidence"),
                          ({"expected_version": 0}, "expected_version"), ({"tags": ["A"]}, "tags")]:
        with pytest.raises(InvalidInputError) as err:
            disk_cx.update(A, m.id, **({"content": "y"} | kwargs))
        assert err.value.field == field
    assert disk_cx.get(A, m.id).version == 1


def test_update_embeds_the_new_content(store_path, clock, hashing):
    from tests.conftest import open_agents

    cx = open_agents(store_path, A, clock=clock, embeddings=hashing)
    try:
        m = cx.store(A, "kubernetes ingress controller")
        cx.update(A, m.id, content="postgres connection pool")
        assert cx.index_status(A).vectors == 1
        hit = cx.search(A, "postgres connection pool", mode="semantic", explain=True)[0]
        assert hit.memory.id == m.id and hit.explain["semantic"] > 0.99  # the vector of the new content
    finally:
        cx.close()
    cx = open_agents(store_path, A, clock=clock, embeddings=hashing)  # the vector log replays the right vector
    try:
        assert cx.search(A, "postgres connection pool", mode="semantic", explain=True)[0].explain["semantic"] > 0.99
    finally:
        cx.close()


# -- supersession ------------------------------------------------------------------------------------


def test_supersede_keeps_the_old_memory_out_of_current_reads(disk_cx, clock):
    old = disk_cx.store(A, "deploys go out on friday", type="convention", tags=["deploy"])
    t_old = clock.now
    clock.advance(days=1)
    new = disk_cx.supersede(A, old.id, "deploys go out on tuesday", reason="friday freezes")
    assert (new.type.value, new.tags, new.valid_from) == ("convention", ("deploy",), clock.now)
    kept = disk_cx.get(A, old.id)
    assert (kept.valid_until, kept.superseded_by, kept.superseded_reason) == (new.valid_from, new.id, "friday freezes")
    assert ids(disk_cx.recall(A, "deploys")) == [new.id]
    assert set(ids(disk_cx.recall(A, "deploys", include_superseded=True))) == {old.id, new.id}
    assert ids(h.memory for h in disk_cx.search(A, "deploys friday", mode="bm25")) == [new.id]
    assert ids(disk_cx.list_memories(A).items) == [new.id]
    assert "friday" not in disk_cx.agent_start(A, "when do deploys go out")
    # as of a past moment: what was recorded and valid then
    assert ids(disk_cx.recall(A, "deploys", as_of=t_old + timedelta(hours=1))) == [old.id]
    assert ids(disk_cx.recall(A, "deploys", as_of=clock.now)) == [new.id]
    assert ids(disk_cx.recall(A, "deploys", as_of=t_old - timedelta(seconds=1))) == []
    replaced_by = [o for p, o in triples_of(disk_cx, A, old.id) if p.endswith("isReplacedBy")]
    assert replaced_by == [memory_iri(A, new.id)]
    assert [o for p, o in triples_of(disk_cx, A, old.id) if p == PROV + "invalidatedAtTime"]


def test_supersede_by_an_existing_memory(disk_cx, clock):
    old = disk_cx.store(A, "node 18")
    clock.advance(minutes=5)
    new = disk_cx.store(A, "node 20")
    assert disk_cx.supersede(A, old.id, by=new.id).id == new.id
    assert disk_cx.get(A, old.id).superseded_by == new.id
    assert ids(disk_cx.recall(A, "node")) == [new.id]


def test_supersede_errors_change_nothing(disk_cx):
    old, other = disk_cx.store(A, "a"), disk_cx.store(A, "b")
    disk_cx.store("planner", "c")
    cases = [({}, "content"), ({"content": "x", "by": other.id}, "content"), ({"by": old.id}, "by"),
             ({"content": "x", "colour": "red"}, "colour"), ({"content": "x", "type": "bogus"}, "type"),
             ({"content": ""}, "content")]
    for kwargs, field in cases:
        with pytest.raises(InvalidInputError) as err:
            disk_cx.supersede(A, old.id, **kwargs)
        assert err.value.field == field, kwargs
    with pytest.raises(MemoryNotFoundError):
        disk_cx.supersede(A, old.id, by="0" * 28)
    disk_cx.supersede(A, old.id, "a2")
    with pytest.raises(InvalidInputError, match="already superseded"):
        disk_cx.supersede(A, old.id, "a3")
    assert disk_cx.count(A) == 3


def test_as_of_returns_each_memory_as_it_was_then(disk_cx, clock):
    m = disk_cx.store(A, "the linter is flake8 with defaults")
    t1 = clock.now
    clock.advance(days=2)
    disk_cx.update(A, m.id, content="the linter is ruff with defaults")
    clock.advance(days=2)
    disk_cx.update(A, m.id, tags=["lint"])
    then = disk_cx.recall(A, "linter", as_of=t1 + timedelta(days=1))
    assert [(x.content, x.version) for x in then] == [("the linter is flake8 with defaults", 1)]
    middle = disk_cx.search(A, "linter defaults", mode="bm25", as_of=t1 + timedelta(days=3))
    assert [(h.memory.content, h.memory.version, h.memory.tags) for h in middle] == [
        ("the linter is ruff with defaults", 2, ())]
    assert disk_cx.recall(A, "linter", as_of=clock.now)[0].version == 3
    assert disk_cx.recall(A, "linter")[0].content == "the linter is ruff with defaults"


def test_supersede_by_refuses_a_superseded_or_expired_memory_so_no_cycle_forms(disk_cx, clock):
    a, b = disk_cx.store(A, "v1 of the fact"), disk_cx.store(A, "v2 of the fact")
    disk_cx.supersede(A, a.id, by=b.id)
    with pytest.raises(InvalidInputError) as err:
        disk_cx.supersede(A, b.id, by=a.id)  # a cycle: a is superseded already
    assert err.value.field == "by" and "superseded" in str(err.value)
    gone = disk_cx.store(A, "a scratch note", ttl="1h")
    clock.advance(hours=2)
    with pytest.raises(InvalidInputError, match="expired") as err:
        disk_cx.supersede(A, b.id, by=gone.id)
    assert err.value.field == "by"
    assert disk_cx.get(A, b.id).superseded_by is None and ids(disk_cx.recall(A, "fact")) == [b.id]


def test_a_successor_valid_from_later_leaves_its_predecessor_current_until_then(disk_cx, clock):
    old = disk_cx.store(A, "the office is in paris")
    new = disk_cx.supersede(A, old.id, "the office is in lyon", valid_from=clock.now + timedelta(days=30))
    assert disk_cx.get(A, old.id).valid_until == new.valid_from
    assert ids(disk_cx.recall(A, "office")) == [old.id]  # the move has not happened yet
    assert ids(h.memory for h in disk_cx.search(A, "office", mode="bm25")) == [old.id]
    clock.advance(days=31)
    assert ids(disk_cx.recall(A, "office")) == [new.id]
    assert ids(disk_cx.list_memories(A).items) == [new.id]


def test_supersede_ignores_fields_given_as_none(disk_cx):
    old = disk_cx.store(A, "x is 1", type="decision", tags=["x"])
    new = disk_cx.supersede(A, old.id, "x is 2", type=None, tags=None, project=None)
    assert (new.type.value, new.tags) == ("decision", ("x",))


def test_forgetting_or_purging_a_successor_reinstates_what_it_superseded(disk_cx, clock, store_path):
    old = disk_cx.store(A, "builds use make")
    new = disk_cx.supersede(A, old.id, "builds use bazel")
    assert disk_cx.forget(A, new.id) is True
    back = disk_cx.get(A, old.id)
    assert (back.superseded_by, back.valid_until, back.superseded_reason) == (None, None, None)
    assert not [p for p, _ in triples_of(disk_cx, A, old.id) if p.endswith("isReplacedBy")]
    assert ids(disk_cx.recall(A, "builds")) == [old.id]
    # an expiring successor: purged, the fact it replaced stands again (and the index agrees after a restart)
    temp = disk_cx.supersede(A, old.id, "builds use ninja this week", source="task_completion")
    clock.advance(days=8)
    assert disk_cx.purge_expired(A) == 1 and disk_cx.get(A, temp.id) is None
    assert ids(disk_cx.recall(A, "builds")) == [old.id]
    cx = reopen(disk_cx, store_path, A, clock=clock)
    assert ids(cx.recall(A, "builds")) == [old.id] and cx.get(A, old.id).superseded_by is None


def test_capture_does_not_dedupe_against_a_superseded_or_expired_memory(disk_cx, clock):
    old = disk_cx.store(A, "cache ttl is 60s", type="insight", source="agent_end")
    disk_cx.supersede(A, old.id, "cache ttl is 300s")
    captured = disk_cx.agent_end(A, "LEARNED: cache ttl is 60s")  # true again: a new current memory
    assert len(captured) == 1 and captured[0].id != old.id and captured[0].usage_count == 0
    assert disk_cx.get(A, old.id).usage_count == 0
    assert "cache ttl is 60s" in [m.content for m in disk_cx.recall(A, "cache ttl")]


def test_empty_metadata_is_no_metadata(disk_cx):
    m = disk_cx.store(A, "x", metadata={})
    assert m.metadata is None and disk_cx.get(A, m.id).metadata is None
    assert not [p for p, _ in triples_of(disk_cx, A, m.id) if p.endswith("metadata")]


def test_supersedes_lines_at_agent_end(disk_cx):
    old = disk_cx.store(A, "the api uses basic auth")
    captured = disk_cx.agent_end(A, f"Done.\nSUPERSEDES {old.id}: the api uses oauth2\n- SUPERSEDES <nope>: x\n"
                                    "LEARNED: tokens expire hourly")
    assert [m.content for m in captured] == ["tokens expire hourly", "the api uses oauth2"]
    assert captured[1].source is Source.AGENT_END
    assert disk_cx.get(A, old.id).superseded_by == captured[1].id


# -- validation and decay ----------------------------------------------------------------------------


def test_validate_restarts_the_decay_clock_and_raises_confidence(disk_cx, clock):
    m = disk_cx.store(A, "retry with backoff", confidence=0.98)
    clock.advance(days=90)
    before = disk_cx.search(A, "retry backoff", mode="bm25", explain=True)[0].explain["decay"]
    assert before == pytest.approx(0.5)  # manual: half-life 90 days
    v = disk_cx.validate(A, m.id)
    assert (v.validated_at, v.confidence, v.version) == (clock.now, 1.0, 1)
    assert disk_cx.search(A, "retry backoff", mode="bm25", explain=True)[0].explain["decay"] == pytest.approx(1.0)
    assert disk_cx.validate(A, m.id).confidence == 1.0  # at most 1
    with pytest.raises(MemoryNotFoundError):
        disk_cx.validate(A, "0" * 28)


def test_decay_is_by_source_and_shown_in_explain(disk_cx, clock):
    summary = disk_cx.store(A, "session: fixed the cache bug", source="session_summary", ttl="never")
    manual = disk_cx.store(A, "the cache bug came from stale keys")
    clock.advance(days=7)
    hits = {h.memory.id: h for h in disk_cx.search(A, "cache bug", mode="bm25", explain=True)}
    assert hits[summary.id].explain["decay"] == pytest.approx(0.5)  # 7 day half-life
    assert hits[manual.id].explain["decay"] == pytest.approx(0.5 ** (7 / 90))
    for hit in hits.values():
        e = hit.explain
        assert e["decay_weight"] == pytest.approx(0.9 + 0.1 * e["decay"])  # bounded: the default floor is 0.9
        assert hit.score == pytest.approx(e["fused"] * e["recency"] * e["usage"] * e["confidence"] * e["decay_weight"])
    bare = disk_cx.search(A, "cache bug", mode="bm25", explain=True, rerank=Reranking(decay_floor=0.0))
    assert {h.memory.id: h.explain["decay_weight"] for h in bare}[summary.id] == pytest.approx(0.5)
    # switched off, the factor is 1
    off = disk_cx.search(A, "cache bug", mode="bm25", explain=True, rerank=Reranking(decay=False))
    assert {h.explain["decay"] for h in off} == {h.explain["decay_weight"] for h in off} == {1.0}
    with pytest.raises(InvalidInputError) as err:
        Reranking(decay_floor=1.5)
    assert err.value.field == "decay_floor"


def test_decay_half_life_per_agent(disk_cx, clock):
    disk_cx.agents.register("fast", settings=AgentSettings(decay={"manual": timedelta(days=1)}))
    disk_cx.store("fast", "cache bug")
    clock.advance(days=2)
    assert disk_cx.search("fast", "cache", mode="bm25", explain=True)[0].explain["decay"] == pytest.approx(0.25)
    assert DEFAULT_HALF_LIFE[Source.MANUAL] == timedelta(days=90)


def test_and_recall_keeps_its_order_whatever_the_age(disk_cx, clock):
    old = disk_cx.store(A, "cache cache cache", source="session_summary", ttl="never")
    clock.advance(days=60)
    new = disk_cx.store(A, "cache")
    assert ids(disk_cx.recall(A, "cache")) == [old.id, new.id]  # occurrences first, not age


def test_the_current_fact_outranks_its_outdated_version(disk_cx, clock):
    """The issue's motivating case: the outdated version shares more words and was used more."""
    old = disk_cx.store(A, "the staging database host is db1 staging database host db1")
    for _ in range(5):
        disk_cx.touch(A, old.id)
    clock.advance(days=30)
    new = disk_cx.supersede(A, old.id, "staging database moved to db2")
    hits = disk_cx.search(A, "staging database host", mode="bm25")
    assert ids(h.memory for h in hits) == [new.id]


# -- listing -----------------------------------------------------------------------------------------


def test_listing_pages_newest_first_with_a_cursor(disk_cx, clock):
    made = []
    for i in range(7):
        made.append(disk_cx.store(A, f"memory {i}", type="pattern" if i % 2 else "insight"))
        clock.advance(seconds=1 if i != 3 else 0)  # two memories at the same moment: the id breaks the tie
    seen, cursor = [], None
    while True:
        page = disk_cx.list_memories(A, limit=3, cursor=cursor)
        seen += page.items
        cursor = page.next_cursor
        if cursor is None:
            break
        disk_cx.store(A, "written while paging")  # newer than the cursor: not in this listing
    expected = sorted(made, key=lambda m: (m.created_at, m.id), reverse=True)
    assert ids(seen) == ids(expected)
    assert ids(disk_cx.list_memories(A, type="pattern", limit=50).items) == [m.id for m in expected
                                                                            if m.type.value == "pattern"]
    with pytest.raises(InvalidInputError) as err:
        disk_cx.list_memories(A, cursor="not-a-cursor")
    assert err.value.field == "cursor"
    with pytest.raises(InvalidInputError):
        disk_cx.list_memories(A, limit=0)


# -- stores written before the lifecycle -------------------------------------------------------------


def test_a_store_written_before_the_lifecycle_opens_unchanged(store_path):
    """Memories as the seed wrote them (nine triples each, no lifecycle fields) read as manual, version 1,
    agent scope, valid from their creation, and can be updated and superseded."""
    from pyoxigraph import Literal, Quad, Store

    from tests.conftest import open_agents

    xsd = "http://www.w3.org/2001/XMLSchema#"
    store = Store(str(store_path))
    graph = NamedNode("urn:cortex:graph:agent:reviewer")
    for i in range(3):
        s = NamedNode(memory_iri(A, f"old{i}"))
        p = "urn:cortex:agentmem:"
        for predicate, value in [
            ("content", Literal(f"legacy memory {i} about caching")), ("type", Literal("pattern")),
            ("project", Literal("global")), ("confidence", Literal("0.7", datatype=NamedNode(xsd + "double"))),
            ("usageCount", Literal("2", datatype=NamedNode(xsd + "integer"))),
            ("createdAt", Literal("2025-05-01T10:00:00+00:00", datatype=NamedNode(xsd + "dateTime"))),
            ("lastUsedAt", Literal("2025-06-01T10:00:00+00:00", datatype=NamedNode(xsd + "dateTime"))),
            ("agent", NamedNode("urn:cortex:agent:reviewer")),
        ]:
            store.add(Quad(s, NamedNode(p + predicate), value, graph))
        store.add(Quad(s, NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
                       NamedNode("urn:cortex:agentmem:Memory"), graph))
    store.flush()
    del store
    cx = open_agents(store_path, A)
    try:
        memories = cx.recall(A, "caching")
        assert len(memories) == 3
        m = cx.get(A, "old0")
        assert (m.source, m.version, m.scope, m.tags, m.metadata, m.expires_at, m.valid_until) == (
            Source.MANUAL, 1, "agent", (), None, None, None)
        assert m.valid_from == m.created_at == m.updated_at
        assert cx.update(A, "old0", content="legacy memory about caching, corrected").version == 2
        cx.supersede(A, "old1", "caching moved to redis")
        assert len(cx.recall(A, "caching")) == 3
        assert len(cx.history(A, "old0")) == 2
    finally:
        cx.close()
