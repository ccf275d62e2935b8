"""Ranked search: BM25 over analysed terms, modes, fallback, filters, persistence."""

from __future__ import annotations

import pytest

from cortex import Cortex, InvalidInputError
from cortex.index.analyzer import analyze
from tests.conftest import reopen


def test_analyzer_stems_drops_stop_words_and_splits_cjk():
    assert analyze("The Running tests RAN quickly") == ["run", "test", "ran", "quick"]
    assert analyze("Ｆｕｌｌｗｉｄｔｈ Straße") == ["fullwidth", "strass"]
    assert analyze("数据库连接") == ["数据", "据库", "库连", "连接"]
    assert analyze("a 猫") == ["猫"]


def test_bm25_finds_a_question_that_and_recall_misses(cx):
    target = cx.store("reviewer", "Caroline went to the LGBTQ support group on 7 May 2023")
    cx.store("reviewer", "Melanie painted a sunrise over the lake")
    cx.store("reviewer", "The group discussed the budget")
    question = "When did Caroline go to the LGBTQ support group?"
    assert cx.recall("reviewer", question) == []
    result = cx.search("reviewer", question, mode="bm25")
    assert result.mode == "bm25" and result.note is None
    assert result[0].memory.id == target.id
    assert result[0].score > result[1].score > 0


def test_rare_terms_weigh_more_than_common_ones(cx):
    for i in range(20):
        cx.store("reviewer", f"deploy service number {i}")
    rare = cx.store("reviewer", "rollback procedure for the service")
    hits = cx.search("reviewer", "service rollback", mode="bm25").hits
    assert hits[0].memory.id == rare.id


def test_stemming_matches_word_forms(cx):
    m = cx.store("reviewer", "Tests were failing because of the cache")
    assert cx.search("reviewer", "failed test caching", mode="bm25")[0].memory.id == m.id


def test_semantic_and_hybrid_fall_back_to_bm25_and_say_so(cx):
    m = cx.store("reviewer", "retry the payment webhook")
    for mode in ("semantic", "hybrid"):
        result = cx.search("reviewer", "payment webhook", mode=mode, explain=True)
        assert (result.mode, result.requested_mode) == ("bm25", mode)
        assert result.note == f"{mode} search fell back to bm25: no embedding provider configured"
        assert result[0].memory.id == m.id and result[0].explain["semantic"] == 0.0


def test_all_mode_is_and_token_recall_with_occurrence_scores(cx):
    a = cx.store("reviewer", "cache cache invalidation")
    cx.store("reviewer", "cache only")
    result = cx.search("reviewer", "cache invalid", mode="all", explain=True)
    assert [h.memory.id for h in result] == [a.id]
    assert result[0].score == 3.0
    assert result[0].explain == {"lexical": 3.0, "semantic": 0.0, "fused": 3.0, "recency": 1.0, "usage": 1.0,
                                 "decay": 1.0, "decay_weight": 1.0, "confidence": 1.0}
    assert cx.search("reviewer", "cache invalid", mode="all")[0].explain is None


def test_filters_isolation_and_forget(cx):
    mine = cx.store("reviewer", "database index tuning", type="decision", project="p")
    cx.store("reviewer", "database index naming", type="convention", project="q")
    cx.store("planner", "database index for the planner")
    hits = cx.search("reviewer", "database index", mode="bm25", type="decision")
    assert [h.memory.id for h in hits] == [mine.id]
    assert [h.memory.id for h in cx.search("reviewer", "database", mode="bm25", project="p")] == [mine.id]
    assert len(cx.search("reviewer", "database", mode="bm25")) == 2
    cx.forget("reviewer", mine.id)
    assert mine.id not in [h.memory.id for h in cx.search("reviewer", "database tuning", mode="bm25")]


def test_cjk_text_is_searchable(cx):
    m = cx.store("reviewer", "数据库连接必须在请求结束时关闭")
    cx.store("reviewer", "缓存需要定期清理")
    assert cx.search("reviewer", "数据库连接", mode="bm25")[0].memory.id == m.id


def test_bm25_index_persists_and_recovers(disk_cx, store_path):
    cx = disk_cx
    cx.store_many("reviewer", [{"content": f"filler memory {i}"} for i in range(1500)])
    m = cx.store("reviewer", "kubernetes liveness probe timeout")
    cx2 = reopen(cx, store_path, "reviewer")
    try:
        assert cx2.index_status("reviewer").rebuilds == 0
        assert cx2.search("reviewer", "liveness probes", mode="bm25")[0].memory.id == m.id
    finally:
        cx2.close()


def test_search_validates(cx):
    with pytest.raises(InvalidInputError, match="mode"):
        cx.search("reviewer", "x", mode="fuzzy")
    with pytest.raises(InvalidInputError, match="query"):
        cx.search("reviewer", None)  # type: ignore[arg-type]
    assert len(cx.search("reviewer", "", mode="bm25")) == 0
    assert len(Cortex.render([])) == 0


def test_strongly_relevant_old_memory_beats_barely_relevant_fresh_one(cx, clock):
    old = cx.store("reviewer", "postgres vacuum freeze tuning for large tables", confidence=0.7)
    clock.advance(days=120)
    fresh = cx.store("reviewer", "tables of contents in the wiki", confidence=0.7)
    for _ in range(10):
        cx.touch("reviewer", fresh.id)
    hits = cx.search("reviewer", "postgres vacuum freeze tables", mode="bm25", explain=True).hits
    assert [h.memory.id for h in hits] == [old.id, fresh.id]
    assert hits[0].explain["recency"] < hits[1].explain["recency"]
    assert hits[1].explain["usage"] == pytest.approx(1.5)


def test_recency_usage_and_confidence_reorder_equal_relevance(cx, clock):
    from cortex import Reranking

    # the same text three times on purpose: store_many writes what it is given (store would answer the first)
    stale, = cx.store_many("reviewer", [{"content": "flaky integration test", "confidence": 0.7}])
    clock.advance(days=14)
    recent, = cx.store_many("reviewer", [{"content": "flaky integration test", "confidence": 0.7}])
    hits = cx.search("reviewer", "flaky integration", mode="bm25", explain=True).hits
    assert [h.memory.id for h in hits] == [recent.id, stale.id]
    assert hits[1].explain["recency"] == pytest.approx(0.95)  # one half-life: 0.9 + 0.1 * 0.5
    assert hits[0].explain["fused"] == hits[1].explain["fused"] == 1.0
    sure, = cx.store_many("reviewer", [{"content": "flaky integration test", "confidence": 1.0}])
    clock.advance(days=1)
    hits = cx.search("reviewer", "flaky integration", mode="bm25",
                     rerank=Reranking(recency=False, usage=False)).hits
    assert hits[0].memory.id == sure.id
    off = cx.search("reviewer", "flaky integration", mode="bm25", rerank=False, explain=True).hits
    assert off[0].explain["recency"] == off[0].explain["usage"] == off[0].explain["confidence"] == 1.0
    assert off[0].score == off[0].explain["fused"] == off[0].explain["lexical"]


def test_reranking_settings_are_validated():
    from cortex import Reranking

    with pytest.raises(InvalidInputError, match="half_life_days"):
        Reranking(half_life_days=0)
    with pytest.raises(InvalidInputError, match="max_usage_boost"):
        Reranking(max_usage_boost=0.5)


def test_an_in_memory_store_ranks_its_first_memory():
    from cortex import Cortex

    with Cortex.open(None, embeddings=None) as cx:
        cx.agents.register("r")
        m = cx.store("r", "Always check null pointers")
        hits = cx.search("r", "null pointer", mode="bm25").hits
        assert [h.memory.id for h in hits] == [m.id] and hits[0].score > 0
        assert cx.count("r") == 1


def test_bm25_scores_stay_positive_after_forgetting(cx):
    keep = cx.store("reviewer", "flaky webhook retry")
    for _ in range(3):
        cx.forget("reviewer", cx.store("reviewer", "flaky webhook").id)
    hits = cx.search("reviewer", "flaky webhook", mode="bm25", rerank=False).hits
    assert [h.memory.id for h in hits] == [keep.id] and hits[0].score > 0
