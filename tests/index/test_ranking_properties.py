"""Property test of the index's read path against a plain-Python model: AND-token recall (substring counts, the
order by occurrences, usage, last use, creation and insertion) and the records a read loads, over random
interleavings of adds, replacements, touches, removals, merges and reads. Enough documents that the precomputed
ranks, their stale marks and the cache of frequent tokens' hits are all exercised."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex.index.memory_index import MemoryIndex
from cortex.model import NO_FILTERS, Memory, MemoryType

WORDS = ["ab", "abc", "b", "ca", "bab", "xyz", "é", "aaa"]
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

CONTENT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), CONTENT, st.integers(0, 3), st.integers(0, 5)),
    st.tuples(st.just("touch"), st.integers(0, 10_000), st.integers(0, 5)),
    st.tuples(st.just("replace"), st.integers(0, 10_000), CONTENT),
    st.tuples(st.just("remove"), st.integers(0, 10_000)),
    st.tuples(st.just("merge"),),
    st.tuples(st.just("read"), st.lists(st.sampled_from(["a", "b", "ab", "ca", "aa", "é", "xyz", "q"]),
                                        min_size=1, max_size=3, unique=True)),
), max_size=40)


def memory(mid: str, content: str, usage: int, minutes: int, created_minutes: int = 0) -> Memory:
    return Memory(id=mid, agent="a", content=content, type=MemoryType.INSIGHT, project="p", confidence=0.5,
                  usage_count=usage,
                  created_at=T0 + timedelta(minutes=created_minutes), last_used_at=T0 + timedelta(minutes=minutes))


def expected(model: dict[str, dict], tokens: list[str], limit: int) -> list[tuple[str, float]]:
    rows = []
    for mid, m in model.items():
        counts = [m["content"].count(t) for t in tokens]
        if all(counts):
            rows.append((-sum(counts), -m["usage"], -m["minutes"], -m["created"], -m["order"], mid))
    rows.sort()
    return [(r[-1], float(-r[0])) for r in rows[:limit]]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**32), size=st.integers(300, 700), ops=OPS, limit=st.sampled_from([1, 3, 10, 1000]))
def test_recall_and_records_match_a_plain_model(seed, size, ops, limit):
    rng = random.Random(seed)  # the bulk of the documents (drawn by hypothesis, hundreds of them are slow to make)
    base = [(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))), rng.randint(0, 3), rng.randint(0, 5),
             rng.randint(0, 3)) for _ in range(size)]
    index = MemoryIndex()
    model: dict[str, dict] = {}
    order = 0

    def put(mid: str, content: str, usage: int, minutes: int, created: int) -> None:
        nonlocal order
        index.add(memory(mid, content, usage, minutes, created))
        order += 1
        model[mid] = {"content": content, "usage": usage, "minutes": minutes, "created": created, "order": order}

    for k, (content, usage, minutes, created) in enumerate(base):
        put(f"m{k:04d}", content, usage, minutes, created)
    index.merge()
    for probe in (["a"], ["b"], ["ab", "b"]):  # ranks and cached hits exist before the writes below
        assert index.search_all(probe, NO_FILTERS, limit) == expected(model, probe, limit)
    for op in ops:
        ids = sorted(model)
        if op[0] == "add":
            put(f"n{order:05d}", op[1], op[2], op[3], 0)
        elif op[0] == "touch" and ids:
            mid = ids[op[1] % len(ids)]
            m = model[mid]
            m["usage"] += 1
            m["minutes"] = 10 + op[2]
            index.set_usage(memory(mid, m["content"], m["usage"], m["minutes"], m["created"]))
        elif op[0] == "replace" and ids:
            mid = ids[op[1] % len(ids)]
            m = model[mid]
            if op[2] != m["content"]:  # a new content is a new document: last in insertion order
                order += 1
                m["order"] = order
            m["content"] = op[2]
            index.upsert(memory(mid, m["content"], m["usage"], m["minutes"], m["created"]))
        elif op[0] == "remove" and ids:
            mid = ids[op[1] % len(ids)]
            del model[mid]
            assert index.remove(mid)
        elif op[0] == "merge":
            index.merge()
        elif op[0] == "read":
            assert index.search_all(op[1], NO_FILTERS, limit) == expected(model, op[1], limit)
    for probe in (["a"], ["b"], ["ab", "b"], ["xyz", "a"]):
        assert index.search_all(probe, NO_FILTERS, limit) == expected(model, probe, limit)
    everything = index.search_all([], NO_FILTERS, limit)
    rows = sorted((-m["usage"], -m["minutes"], -m["created"], -m["order"], mid) for mid, m in model.items())
    assert everything == [(r[-1], 0.0) for r in rows[:limit]]
    chosen = sorted(model)[::7] + ["missing"]
    records = index.records(chosen)
    assert [r["content"] if r else None for r in records] == [model[i]["content"] if i in model else None
                                                              for i in chosen]
    assert [r["usage_count"] if r else None for r in records] == [model[i]["usage"] if i in model else None
                                                                  for i in chosen]
