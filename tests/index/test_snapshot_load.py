"""A snapshot read back in place (a private mapping of the file, the id map built only when needed) is the same
index as the one saved: the same results, records and lengths, and it stays the same under later writes, forgets
and merges (documents renumbered under the ids that reads returned before the map existed)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.index.analyzer import analyze
from cortex.index.memory_index import MemoryIndex
from cortex.model import NO_FILTERS
from tests.index.test_batch_add import ENTRY, memory

STEP = st.one_of(st.lists(ENTRY, min_size=1, max_size=12).map(lambda b: ("add", b)),
                 st.integers(0, 200).map(lambda i: ("forget", i)), st.just(("merge", None)),
                 st.just(("reload", None)))
QUERIES = ["null", "ull", "run", "メモ", "x a", "pointer the"]


def _reload(index: MemoryIndex, directory: Path) -> MemoryIndex:
    path = directory / "snapshot.npz"
    index.save(path)
    loaded = MemoryIndex.load(path)
    assert loaded is not None
    return loaded


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=10), query=st.sampled_from(QUERIES))
def test_a_reloaded_index_answers_as_the_one_kept_in_memory(steps, query):
    kept, reloaded = MemoryIndex(), MemoryIndex()
    made: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, arg in steps:
            if kind == "add":
                memories = [memory(len(made) + k, entry) for k, entry in enumerate(arg)]
                made += [m.id for m in memories]
                kept.add_many(memories)
                reloaded.add_many(memories)
            elif kind == "forget" and made:
                victim = made[arg % len(made)]
                assert kept.remove(victim) == reloaded.remove(victim)
            elif kind == "merge":
                kept.merge()
                reloaded.merge()
            elif kind == "reload":
                kept.merge()  # (saving merges)
                reloaded = _reload(reloaded, Path(tmp))
            tokens = query.split()
            hits = reloaded.search_all(tokens, NO_FILTERS, 100)
            assert hits == kept.search_all(tokens, NO_FILTERS, 100)
            # the ids a read returned are found without the map, then every id with it
            assert reloaded.records([i for i, _ in hits]) == kept.records([i for i, _ in hits])
            assert len(reloaded) == len(kept)
            assert reloaded.records(made) == kept.records(made)
            assert reloaded.doc_of == kept.doc_of
            terms = analyze(query)
            assert np.array_equal(reloaded.bm25_scores(terms), kept.bm25_scores(terms))


def test_a_loaded_snapshot_is_mapped_in_place_and_its_arrays_are_aligned_and_writable(tmp_path):
    index = MemoryIndex()
    index.add_many([memory(i, (f"word{i % 7} common", ["t1"], i % 3, "global")) for i in range(500)])
    loaded = _reload(index, tmp_path)
    for vec in loaded.cols.values():
        assert vec.view.flags.aligned and vec.view.flags.writeable
    assert loaded._doc_of is None  # not built by the load
    hits = loaded.search_all(["word3"], NO_FILTERS, 5)
    assert [r["content"] for r in loaded.records([i for i, _ in hits])] == ["word3 common"] * 5
    assert loaded._doc_of is None  # nor by a read of its hits
    assert loaded.remove("m3") and loaded.record("m3") is None and len(loaded) == 499
    # the file is untouched by what the process changed in its mapping
    again = MemoryIndex.load(tmp_path / "snapshot.npz")
    assert again is not None and len(again) == 500 and again.record("m3") is not None


@pytest.mark.parametrize("where", [0.05, 0.5, 0.95])
def test_a_flipped_byte_anywhere_in_the_data_makes_the_snapshot_unreadable(tmp_path, where):
    index = MemoryIndex()
    index.add_many([memory(i, (f"word{i % 7} common", [], 0, "global")) for i in range(300)])
    path = tmp_path / "snapshot.npz"
    index.save(path)
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x01
    path.write_bytes(bytes(data))
    assert MemoryIndex.load(path) is None
