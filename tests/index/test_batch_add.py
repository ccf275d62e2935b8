"""A batch added to the index at once (``MemoryIndex.add_many``: the write path of ``store_many`` and imports)
leaves exactly the index that adding its memories one by one leaves: postings, columns, extras and results,
with the pending postings and after merges (forgotten memories renumbered away)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.index.analyzer import analyze
from cortex.index.memory_index import MemoryIndex
from cortex.model import NO_FILTERS, Memory, MemoryType

WORDS = ["null", "pointer", "nullable", "annul", "the", "running", "runs", "日本語", "メモ", "café", "x", "Aa"]
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

CONTENT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
ENTRY = st.tuples(CONTENT, st.lists(st.sampled_from(["t1", "t2"]), max_size=2, unique=True),
                  st.integers(0, 5), st.sampled_from(["global", "p1"]))
# a step: a batch of new memories (by index into the entries), forgetting a memory, or a merge
STEP = st.one_of(st.lists(ENTRY, min_size=1, max_size=12).map(lambda b: ("add", b)),
                 st.integers(0, 200).map(lambda i: ("forget", i)), st.just(("merge", None)))


def memory(i: int, entry: tuple[str, list[str], int, str]) -> Memory:
    content, tags, usage, project = entry
    return Memory(id=f"m{i}", agent="a", content=content, type=MemoryType.INSIGHT, project=project,
                  confidence=0.5, usage_count=usage, created_at=T0 + timedelta(seconds=i),
                  last_used_at=T0 + timedelta(seconds=i), tags=tags)


def state(index: MemoryIndex) -> dict:
    out = {"ids": list(index.ids), "doc_of": dict(index.doc_of), "extras": dict(index.extras),
           "projects": list(index.projects), "alive": index.alive.view.tolist(),
           "texts": [index.texts.get(d) for d in range(len(index.texts))]}
    out.update({f"col:{name}": vec.view.tolist() for name, vec in index.cols.items()})
    for name in ("raw", "terms", "tag_lists"):
        lists = getattr(index, name)
        out[name] = (list(lists.terms), lists.base_off.tolist(), lists.base_docs.tolist(), lists.base_tf.tolist(),
                     {t: list(p) for t, p in lists.delta.items()})
    return out


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=8), query=st.sampled_from(["null", "ull", "run", "メモ", "x a"]))
def test_a_batch_indexes_as_its_memories_one_by_one(steps, query):
    batched, single = MemoryIndex(), MemoryIndex()
    made: list[str] = []
    for kind, arg in steps:
        if kind == "add":
            memories = [memory(len(made) + k, entry) for k, entry in enumerate(arg)]
            made += [m.id for m in memories]
            batched.add_many(memories)
            for m in memories:
                single.add(m)
        elif kind == "forget" and made:
            victim = made[arg % len(made)]
            assert batched.remove(victim) == single.remove(victim)
        elif kind == "merge":
            batched.merge()
            single.merge()
        assert state(batched) == state(single)
        tokens = query.split()
        assert batched.search_all(tokens, NO_FILTERS, 100) == single.search_all(tokens, NO_FILTERS, 100)
        terms = analyze(query)
        assert np.array_equal(batched.bm25_scores(terms), single.bm25_scores(terms))


def test_a_batch_that_replaces_a_memory_is_added_one_by_one():
    index = MemoryIndex()
    index.add_many([memory(0, ("null pointer", [], 0, "global")), memory(1, ("runs", [], 0, "global"))])
    index.add_many([memory(0, ("café", ["t1"], 2, "p1")), memory(2, ("x", [], 0, "global"))])
    assert len(index) == 3 and index.record("m0")["tags"] == ("t1",)
    assert index.search_all(["null"], NO_FILTERS, 10) == []
    assert [i for i, _ in index.search_all(["caf"], NO_FILTERS, 10)] == ["m0"]


def test_merge_keeps_postings_sorted_by_term_then_document():
    """Long lists (a sort that is not stable would reorder them), forgotten memories renumbered away: each
    term's merged postings are exactly its live documents in order, with their counts."""
    from collections import Counter

    from cortex.text import content_words, normalize

    index = MemoryIndex()
    first = [memory(i, (" ".join(WORDS[(i * k) % 12] for k in (1, 3, 7)), [], 0, "global")) for i in range(600)]
    index.add_many(first)
    forgotten = {f"m{i}" for i in range(0, 600, 7)}
    for memory_id in forgotten:
        index.remove(memory_id)
    index.merge()
    later = [memory(1000 + i, (WORDS[i % 12] + " " + WORDS[(i * 5) % 12], [], 0, "global")) for i in range(400)]
    index.add_many(later[:250])
    index.add_many(later[250:])
    index.merge()
    live = [m for m in first if m.id not in forgotten] + later
    assert index.ids == [m.id for m in live]
    lists = index.raw
    for word, tid in lists.term_id.items():
        docs = lists.base_docs[lists.base_off[tid]:lists.base_off[tid + 1]].tolist()
        tfs = lists.base_tf[lists.base_off[tid]:lists.base_off[tid + 1]].tolist()
        expected = [(doc, Counter(content_words(normalize(m.content)))[word]) for doc, m in enumerate(live)
                    if word in content_words(normalize(m.content))]
        assert list(zip(docs, tfs)) == expected
