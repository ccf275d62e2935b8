"""Semantic and hybrid search with the real local model: ranking, fusion, vector persistence, model changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from cortex import Cortex
from cortex.embeddings import EmbeddingError
from cortex.search import Fusion

from .conftest import Clock


class Counting:
    """Wraps a provider, recording how many texts each call embedded; can pose as another model or fail."""

    def __init__(self, inner, model: str | None = None) -> None:
        self.inner = inner
        self.model = model or inner.model
        self.calls: list[int] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise EmbeddingError("endpoint down")
        self.calls.append(len(texts))
        return self.inner.embed(texts)


@pytest.fixture
def sx(store_path: Path, clock: Clock, local) -> Iterator[Cortex]:
    with Cortex.open(store_path, clock=clock, embeddings=Counting(local)) as cortex:
        cortex.agents.register("reviewer")
        yield cortex


def open_with(path: Path, provider, *agents: str) -> Cortex:
    cx = Cortex.open(path, embeddings=provider)
    for name in agents:
        cx.agents.register(name)
    return cx


NOTES = [
    "The login service keeps user sessions in Redis with a 30 minute expiry",
    "Invoices are generated on the first day of every month",
    "The frontend build uses Vite and pnpm workspaces",
    "Database migrations must be reviewed by the data team",
]


def test_semantic_finds_a_paraphrase_that_and_token_and_bm25_miss(sx):
    stored = sx.store_many("reviewer", [{"content": c} for c in NOTES])
    query = "where do we cache authentication state?"
    assert sx.search("reviewer", query, mode="all").hits == []
    assert sx.search("reviewer", query, mode="bm25").hits == []
    result = sx.search("reviewer", query, mode="semantic", explain=True)
    assert result.mode == "semantic" and result.note is None
    assert result[0].memory.id == stored[0].id
    assert 0 < result[0].explain["semantic"] <= 1
    hybrid = sx.search("reviewer", query)
    assert hybrid.mode == "hybrid" and hybrid[0].memory.id == stored[0].id


def test_store_many_embeds_in_one_batch_and_store_embeds_each(sx):
    sx.store_many("reviewer", [{"content": c} for c in NOTES])
    sx.store("reviewer", "one more")
    assert sx.embeddings.calls == [4, 1]
    assert sx._indexes.get("reviewer").vector_count() == 5


def test_hybrid_fuses_both_signals(sx):
    lexical_only = sx.store("reviewer", "zx81 checklist")  # shares a rare word with the query, nothing else
    semantic_only = sx.store("reviewer", "Renew all credentials when there has been a security compromise")
    both = sx.store("reviewer", "zx81: rotate API keys after a security incident")
    query = "zx81 key rotation after a breach"
    hits = sx.search("reviewer", query, mode="hybrid", explain=True, rerank=False).hits
    assert hits[0].memory.id == both.id
    by_id = {h.memory.id: h.explain for h in hits}
    assert by_id[lexical_only.id]["lexical"] > 0 and by_id[semantic_only.id]["lexical"] == 0
    assert by_id[semantic_only.id]["semantic"] > 0.2  # found by meaning alone
    for h in hits:  # the explained components multiply to the score
        e = h.explain
        assert h.score == pytest.approx(e["fused"] * e["recency"] * e["usage"] * e["confidence"])


@pytest.mark.parametrize("method", ["linear", "rrf", "dbsf"])
def test_every_fusion_method_puts_the_memory_both_rankers_like_first(sx, method):
    sx.fusion = Fusion(method=method)
    sx.store("reviewer", "zx81 checklist")
    sx.store("reviewer", "Renew all credentials when there has been a security compromise")
    both = sx.store("reviewer", "zx81: rotate API keys after a security incident")
    hits = sx.search("reviewer", "zx81 key rotation after a breach", rerank=False).hits
    assert hits[0].memory.id == both.id and len(hits) == 3


def test_filters_apply_to_semantic_and_hybrid(sx):
    sx.store("reviewer", "Sessions live in Redis", project="api")
    other = sx.store("reviewer", "Sessions live in Memcached", project="web", type="decision")
    for mode in ("semantic", "hybrid"):
        hits = sx.search("reviewer", "where are sessions stored", mode=mode, project="web").hits
        assert [h.memory.id for h in hits] == [other.id]
        assert sx.search("reviewer", "sessions", mode=mode, type="insight", project="web").hits == []


def test_vectors_survive_a_restart_without_re_embedding(store_path, local):
    provider = Counting(local)
    with open_with(store_path, provider, "reviewer") as cx:
        stored = cx.store_many("reviewer", [{"content": c} for c in NOTES])
    again = Counting(local)
    with open_with(store_path, again, "reviewer") as cx:
        result = cx.search("reviewer", "where do we cache authentication state?", mode="semantic")
        assert result[0].memory.id == stored[0].id
    assert again.calls == [1]  # the query only


def test_vectors_survive_a_crash_through_the_vector_log(store_path, local, tmp_path):
    script = textwrap.dedent("""
        import os, sys
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], embeddings="local")
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": c} for c in sys.argv[2:]])
        os._exit(0)  # no close: no snapshot, only the journal and the vector log
    """)
    subprocess.run([sys.executable, "-c", script, str(store_path), *NOTES], check=True, timeout=300)
    assert (store_path / "cortex-index" / "reviewer" / "vectors.log").stat().st_size > 4 * 384 * 4
    provider = Counting(local)
    with open_with(store_path, provider, "reviewer") as cx:
        result = cx.search("reviewer", "where do we cache authentication state?", mode="semantic")
        assert "Redis" in result[0].memory.content
        assert cx._indexes.get("reviewer").vector_count() == 4
    assert provider.calls == [1]


def test_forget_drops_the_vector_for_good(sx, store_path, local):
    kept, doomed = sx.store_many("reviewer", [{"content": NOTES[0]}, {"content": NOTES[1]}])
    assert sx.forget("reviewer", doomed.id)
    index = sx._indexes.get("reviewer")
    assert index.vector_of(doomed.id) is None and index.vector_count() == 1
    hits = sx.search("reviewer", "monthly invoices", mode="semantic").hits
    assert [h.memory.id for h in hits] == [kept.id]
    sx.close()
    with open_with(store_path, Counting(local), "reviewer") as cx:
        assert [h.memory.id for h in cx.search("reviewer", "monthly invoices", mode="semantic")] == [kept.id]
        assert cx._indexes.get("reviewer").vector_count() == 1


def test_a_model_change_is_detected_and_reindex_re_embeds(store_path, local):
    with open_with(store_path, Counting(local), "reviewer") as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    newer = Counting(local, model="example/other-model")
    with open_with(store_path, newer, "reviewer") as cx:
        result = cx.search("reviewer", "authentication state", mode="hybrid")
        assert result.mode == "bm25"
        assert "made by sentence-transformers/all-MiniLM-L6-v2" in result.note
        assert "example/other-model" in result.note and "cortex reindex reviewer" in result.note
        cx.store("reviewer", "stored while the vectors are stale")  # not embedded with a mismatched model
        assert newer.calls == []
        assert cx.reindex("reviewer") == {"memories": 5, "embedded": 5}
        assert newer.calls == [5]
        assert cx.search("reviewer", "authentication state", mode="hybrid").mode == "hybrid"
    with open_with(store_path, Counting(local, model="example/other-model"), "reviewer") as cx:
        index = cx._indexes.get("reviewer")
        assert index.vector_model == "example/other-model" and index.vector_count() == 5


def test_memories_stored_without_vectors_are_embedded_by_the_next_search(store_path, local):
    with open_with(store_path, None, "reviewer") as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    provider = Counting(local)
    with open_with(store_path, provider, "reviewer") as cx:
        result = cx.search("reviewer", "where do we cache authentication state?", mode="semantic")
        assert result.mode == "semantic" and "Redis" in result[0].memory.content
        assert provider.calls == [4, 1]  # the missing vectors, then the query


def test_too_many_missing_vectors_ask_for_reindex(store_path, local, monkeypatch):
    monkeypatch.setattr("cortex.core.MAX_LAZY_EMBED", 2)
    with open_with(store_path, None, "reviewer") as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    provider = Counting(local)
    with open_with(store_path, provider, "reviewer") as cx:
        result = cx.search("reviewer", "authentication", mode="semantic")
        assert result.mode == "bm25" and "4 memories of agent 'reviewer' have no vectors" in result.note
        progress: list[tuple[int, int]] = []
        assert cx.reindex("reviewer", progress=lambda done, total: progress.append((done, total))) == {
            "memories": 4, "embedded": 4}
        assert progress == [(4, 4)]
        assert cx.search("reviewer", "authentication", mode="semantic").mode == "semantic"


def test_a_failing_provider_loses_nothing(sx, caplog):
    sx.embeddings.fail = True
    memory = sx.store("reviewer", "Sessions live in Redis")
    assert "without vectors: endpoint down" in caplog.text
    result = sx.search("reviewer", "sessions redis", mode="hybrid")
    assert result.mode == "bm25" and "embedding failed: endpoint down" in result.note
    assert result[0].memory.id == memory.id
    sx.embeddings.fail = False
    assert sx.search("reviewer", "where is session state kept", mode="semantic")[0].memory.id == memory.id


def test_agent_start_ranks_with_hybrid_search(sx):
    sx.store_many("reviewer", [{"content": c} for c in NOTES])
    block = sx.agent_start("reviewer", task="Fix the bug where authenticated users get logged out", limit=1)
    assert "Redis" in block and block.count("\n") == 2


def test_reindex_rebuilds_the_lexical_index_without_a_provider(cx, store_path):
    memory = cx.store("reviewer", "Sessions live in Redis")
    assert cx.reindex("reviewer") == {"memories": 1, "embedded": 0}
    assert cx.recall("reviewer", "redis")[0].id == memory.id
    with pytest.raises(Exception, match="invalid agent name"):
        cx.reindex("../etc")


def test_a_torn_vector_record_does_not_corrupt_later_ones(store_path, local):
    with open_with(store_path, Counting(local), "reviewer") as cx:
        first = cx.store("reviewer", NOTES[0])
    log = store_path / "cortex-index" / "reviewer" / "vectors.log"
    with open(log, "ab") as fh:  # a crash in the middle of appending the next record
        fh.write(bytes([28]) + b"01a2000000000000000000000000" + b"\x00" * 100)
    with open_with(store_path, Counting(local), "reviewer") as cx:
        second = cx.store("reviewer", NOTES[1])
    provider = Counting(local)
    with open_with(store_path, provider, "reviewer") as cx:
        index = cx._indexes.get("reviewer")
        for memory in (first, second):
            vector = index.vector_of(memory.id)
            assert vector is not None and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
        assert cx.search("reviewer", "monthly invoices", mode="semantic")[0].memory.id == second.id
    assert provider.calls == [1]
