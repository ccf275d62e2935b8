"""AND-token recall: matching, ordering, filters, limits and isolation (docs/architecture.md, "Recall, start and end")."""

from __future__ import annotations

import pytest

from cortex import InvalidInputError


def contents(memories):
    return [m.content for m in memories]


def test_every_token_must_occur(cx):
    cx.store("reviewer", "check null pointers in C code")
    cx.store("reviewer", "null is fine in SQL")
    assert contents(cx.recall("reviewer", "null pointers")) == ["check null pointers in C code"]
    assert cx.recall("reviewer", "null pointers python") == []


def test_matching_is_case_insensitive_and_inside_words(cx):
    cx.store("reviewer", "Rotate OAuth2 tokens weekly")
    assert contents(cx.recall("reviewer", "auth")) == ["Rotate OAuth2 tokens weekly"]
    assert contents(cx.recall("reviewer", "OAUTH2 TOKEN")) == ["Rotate OAuth2 tokens weekly"]
    assert contents(cx.recall("reviewer", "h2 tok")) == ["Rotate OAuth2 tokens weekly"]


def test_unicode_normalisation_nfkc_and_casefold(cx):
    cx.store("reviewer", "Die Straße ist ﬁne")  # ß casefolds to ss; the ﬁ ligature is NFKC "fi"
    cx.store("reviewer", "ＦＵＬＬＷＩＤＴＨ text")  # NFKC maps fullwidth letters to ASCII
    assert contents(cx.recall("reviewer", "STRASSE")) == ["Die Straße ist ﬁne"]
    assert contents(cx.recall("reviewer", "fine")) == ["Die Straße ist ﬁne"]
    assert contents(cx.recall("reviewer", "fullwidth")) == ["ＦＵＬＬＷＩＤＴＨ text"]


def test_cjk_and_emoji_are_matched_as_substrings(cx):
    cx.store("reviewer", "数据库连接必须关闭 🎉")
    assert len(cx.recall("reviewer", "连接")) == 1
    assert len(cx.recall("reviewer", "🎉")) == 1
    assert cx.recall("reviewer", "连关") == []


def test_order_by_occurrences_then_usage_then_last_used(cx, clock):
    once = cx.store("reviewer", "cache once")
    thrice = cx.store("reviewer", "cache cache cache")
    twice_a = cx.store("reviewer", "cache cache a")
    twice_b = cx.store("reviewer", "cache cache b")
    clock.advance(minutes=1)
    cx.touch("reviewer", twice_b.id)  # twice_b: more used than twice_a
    order = [m.id for m in cx.recall("reviewer", "cache")]
    assert order == [thrice.id, twice_b.id, twice_a.id, once.id]
    clock.advance(minutes=1)
    cx.touch("reviewer", twice_a.id)  # now equal usage; twice_a used more recently
    order = [m.id for m in cx.recall("reviewer", "cache")]
    assert order == [thrice.id, twice_a.id, twice_b.id, once.id]


def test_occurrences_are_summed_over_tokens_and_repeated_tokens_count_once(cx):
    a = cx.store("reviewer", "lock lock file")  # lock:2 file:1 = 3
    b = cx.store("reviewer", "lock file file file")  # lock:1 file:3 = 4
    assert [m.id for m in cx.recall("reviewer", "lock file")] == [b.id, a.id]
    assert [m.id for m in cx.recall("reviewer", "lock lock LOCK file")] == [b.id, a.id]


def test_occurrences_inside_words_are_counted_like_str_count(cx):
    a = cx.store("reviewer", "aaaa")  # "aa" occurs twice (non-overlapping)
    b = cx.store("reviewer", "aa x aa y aa")  # three times
    assert [m.id for m in cx.recall("reviewer", "aa")] == [b.id, a.id]


def test_without_query_orders_by_usage_then_last_used(cx, clock):
    a = cx.store("reviewer", "a")
    b = cx.store("reviewer", "b")
    c = cx.store("reviewer", "c")
    clock.advance(seconds=1)
    cx.touch("reviewer", a.id)
    clock.advance(seconds=1)
    cx.touch("reviewer", c.id)
    assert [m.id for m in cx.recall("reviewer")] == [c.id, a.id, b.id]
    assert [m.id for m in cx.recall("reviewer", "   ")] == [c.id, a.id, b.id]


def test_filters_apply_before_the_limit(cx):
    for i in range(30):
        cx.store("reviewer", f"deploy note {i}", type="insight", project="other")
    target = cx.store("reviewer", "deploy rule", type="decision", project="mayros")
    assert [m.id for m in cx.recall("reviewer", "deploy", type="decision", limit=1)] == [target.id]
    assert [m.id for m in cx.recall("reviewer", "deploy", project="mayros", limit=1)] == [target.id]
    assert cx.recall("reviewer", "deploy", project="unknown-project") == []
    assert len(cx.recall("reviewer", "deploy", project="other", limit=5)) == 5
    assert len(cx.recall("reviewer", "deploy")) == 10  # default limit


def test_small_agent_beside_a_large_one_still_gets_its_memory(cx):
    cx.store_many("planner", [{"content": f"planner memory about testing {i}"} for i in range(5_000)])
    mine = cx.store("reviewer", "reviewer memory about testing")
    assert [m.id for m in cx.recall("reviewer", "testing")] == [mine.id]
    assert [m.id for m in cx.recall("reviewer")] == [mine.id]
    assert len(cx.recall("planner", "testing", limit=50)) == 50


def test_recall_validates_its_arguments(cx):
    with pytest.raises(InvalidInputError, match="type"):
        cx.recall("reviewer", "x", type="bogus")
    with pytest.raises(InvalidInputError, match="limit"):
        cx.recall("reviewer", "x", limit=0)
    with pytest.raises(InvalidInputError, match="query"):
        cx.recall("reviewer", 42)  # type: ignore[arg-type]


def test_forgotten_and_pruned_memories_never_come_back(cx):
    a = cx.store("reviewer", "flaky test retry")
    b = cx.store("reviewer", "flaky test quarantine", confidence=0.1)
    cx.forget("reviewer", a.id)
    cx.prune("reviewer")
    assert cx.recall("reviewer", "flaky") == []
    c = cx.store("reviewer", "flaky network")
    assert [m.id for m in cx.recall("reviewer", "flaky")] == [c.id]
    assert cx.get("reviewer", b.id) is None


def test_merging_the_index_renumbers_documents_and_keeps_results():
    from cortex.index.memory_index import MemoryIndex
    from cortex.model import NO_FILTERS, Memory, MemoryType

    def memory(i: int, content: str) -> Memory:
        from datetime import datetime, timezone

        t = datetime(2026, 1, 1, tzinfo=timezone.utc)
        return Memory(id=f"m{i}", agent="a", content=content, type=MemoryType.INSIGHT, project=f"p{i % 2}",
                      confidence=0.5, usage_count=i, created_at=t, last_used_at=t)

    index = MemoryIndex()
    index.add_many([memory(0, "flaky retry"), memory(1, "flaky quarantine"), memory(2, "stable")])
    index.remove("m0")
    index.add(memory(3, "flaky network"))
    before = index.search_all(["flaky"], NO_FILTERS, 10)
    index.merge()
    assert index.search_all(["flaky"], NO_FILTERS, 10) == before == [("m3", 1.0), ("m1", 1.0)]
    assert "m0" not in index and len(index) == 3 and index.ids == ["m1", "m2", "m3"]
    assert index.record("m3")["project"] == "p1"
