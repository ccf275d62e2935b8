"""Semantic and hybrid search: the mechanics (vectors per write, persistence, crash recovery, forget, model
changes, lazy embedding, provider failures, fusion arithmetic) with the deterministic hashing provider, and
what needs meaning (paraphrases, hybrid fusion of meaning and words, agent start) with the real local model."""

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
from cortex.errors import InvalidInputError
from cortex.search import Fusion

from tests.conftest import Clock, open_agents


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


NOTES = [
    "The login service keeps user sessions in Redis with a 30 minute expiry",
    "Invoices are generated on the first day of every month",
    "The frontend build uses Vite and pnpm workspaces",
    "Database migrations must be reviewed by the data team",
]


@pytest.fixture
def hx(clock: Clock, hashing) -> Iterator[Cortex]:
    """In memory, with the hashing provider behind a counter."""
    with open_agents(None, "reviewer", clock=clock, embeddings=Counting(hashing)) as cortex:
        yield cortex


@pytest.fixture
def mx(clock: Clock, local) -> Iterator[Cortex]:
    """In memory, with the real local model behind a counter."""
    with open_agents(None, "reviewer", clock=clock, embeddings=Counting(local)) as cortex:
        yield cortex


# -- mechanics (hashing provider) ------------------------------------------------------------------


def test_store_many_embeds_in_one_batch_and_store_embeds_each(hx):
    hx.store_many("reviewer", [{"content": c} for c in NOTES])
    hx.store("reviewer", "one more")
    assert hx.embeddings.calls == [4, 1]
    assert hx.index_status("reviewer").vectors == 5
    assert hx.info()["embeddings"] == "cortex/hash-256"


def test_semantic_mode_ranks_by_cosine(hx):
    stored = hx.store_many("reviewer", [{"content": c} for c in NOTES])
    result = hx.search("reviewer", "monthly invoice generation", mode="semantic", explain=True)
    assert result.mode == "semantic" and result.note is None
    assert result[0].memory.id == stored[1].id and 0 < result[0].explain["semantic"] <= 1


@pytest.mark.parametrize("method", ["gated", "linear", "rrf", "dbsf"])
def test_every_fusion_method_combines_both_rankings(hx, method):
    hx.fusion = Fusion(method=method)
    hx.store("reviewer", "zx81 checklist")
    hx.store("reviewer", "rotation of credentials")
    both = hx.store("reviewer", "zx81: rotation of API keys")
    hits = hx.search("reviewer", "zx81 key rotation", explain=True, rerank=False).hits
    assert hits[0].memory.id == both.id and len(hits) == 3
    for h in hits:  # the explained components multiply to the score
        e = h.explain
        assert h.score == pytest.approx(e["fused"] * e["recency"] * e["usage"] * e["confidence"])


def test_a_flat_semantic_side_cannot_reorder_the_lexical_ranking():
    """The default fusion's construction: cosines that barely differ (a weak model) leave bm25's order as it is,
    where min-max fusion stretched them to the full range and let them decide."""
    from cortex.search import _gated, _minmax

    lex = np.array([9.0, 8.5, 8.0, 7.0])
    flat = np.array([0.30, 0.32, 0.33, 0.34])  # reversed, but flat: the model cannot tell them apart
    every = np.ones(4, dtype=bool)
    gated = _gated(lex, flat, every, Fusion())
    assert list(np.argsort(-gated)) == [0, 1, 2, 3]
    linear = 0.5 * _minmax(lex, lex) + 0.5 * _minmax(flat, flat)
    assert list(np.argsort(-linear))[0] != 0  # what min-max did with the same scores
    sure = np.array([0.20, 0.21, 0.22, 0.75])  # one candidate far above the rest: the semantic side is sure
    assert list(np.argsort(-_gated(lex, sure, every, Fusion())))[0] == 3
    assert list(_gated(np.zeros(4), sure, every, Fusion())) == pytest.approx(list(3 * sure))  # no lexical match


def test_a_memory_only_the_semantic_side_found_keeps_its_cosine():
    from cortex.search import _gated

    assert list(_gated(np.zeros(1), np.array([0.4]), np.ones(1, dtype=bool), Fusion())) == pytest.approx([1.2])
    same = _gated(np.zeros(3), np.array([0.4, 0.4, 0.3]), np.ones(3, dtype=bool), Fusion())
    assert same[0] == same[1] > same[2] > 0


class Broken:
    """A provider of the user's that answers NaN."""

    model = "broken"

    def embed(self, texts):
        return np.full((len(texts), 8), np.nan, dtype=np.float32)


def test_a_provider_answering_nan_stores_without_vectors_and_searches_by_words(store_path):
    with open_agents(store_path, "reviewer", embeddings=Broken()) as cx:
        kept = cx.store("reviewer", "the vault token is rotated weekly")
        assert cx.index_status("reviewer").vectors == 0
        result = cx.search("reviewer", "vault token")
        assert result.mode == "bm25" and "not finite" in result.note
        assert result[0].memory.id == kept.id and result[0].score > 0


def test_fusion_settings_are_checked():
    for bad in ({"semantic_weight": -1}, {"confidence_spread": 0}, {"method": "max"}):
        with pytest.raises(InvalidInputError, match=next(iter(bad))):
            Fusion(**bad)


def test_filters_apply_to_semantic_and_hybrid(hx):
    hx.store("reviewer", "Sessions live in Redis", project="api")
    other = hx.store("reviewer", "Sessions live in Memcached", project="web", type="decision")
    for mode in ("semantic", "hybrid"):
        hits = hx.search("reviewer", "where are sessions stored", mode=mode, project="web").hits
        assert [h.memory.id for h in hits] == [other.id]
        assert hx.search("reviewer", "sessions", mode=mode, type="insight", project="web").hits == []


def test_vectors_survive_a_restart_without_re_embedding(store_path, hashing):
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        stored = cx.store_many("reviewer", [{"content": c} for c in NOTES])
    again = Counting(hashing)
    with open_agents(store_path, "reviewer", embeddings=again) as cx:
        result = cx.search("reviewer", "monthly invoices", mode="semantic")
        assert result[0].memory.id == stored[1].id
    assert again.calls == [1]  # the query only


def test_vectors_survive_a_crash_through_the_vector_log(store_path, hashing):
    script = textwrap.dedent("""
        import os, sys
        from cortex import Cortex
        cx = Cortex.open(sys.argv[1], embeddings="hash")
        cx.agents.register("reviewer")
        cx.store_many("reviewer", [{"content": c} for c in sys.argv[2:]])
        os._exit(0)  # no close: no snapshot, only the journal and the vector log
    """)
    subprocess.run([sys.executable, "-c", script, str(store_path), *NOTES], check=True, timeout=120)
    assert (store_path / "cortex-index" / "reviewer" / "vectors.log").stat().st_size > 4 * 256 * 4
    provider = Counting(hashing)
    with open_agents(store_path, "reviewer", embeddings=provider) as cx:
        result = cx.search("reviewer", "user sessions expiry", mode="semantic")
        assert "Redis" in result[0].memory.content
        assert cx.index_status("reviewer").vectors == 4
    assert provider.calls == [1]


def test_forget_drops_the_vector_for_good(store_path, hashing):
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        kept, doomed = cx.store_many("reviewer", [{"content": NOTES[1]}, {"content": NOTES[1] + " too"}])
        assert cx.forget("reviewer", doomed.id)
        assert cx.index_status("reviewer").vectors == 1
        assert [h.memory.id for h in cx.search("reviewer", "monthly invoices", mode="semantic")] == [kept.id]
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        assert [h.memory.id for h in cx.search("reviewer", "monthly invoices", mode="semantic")] == [kept.id]
        assert cx.index_status("reviewer").vectors == 1


def test_a_model_change_is_detected_and_reindex_re_embeds(store_path, hashing):
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    newer = Counting(hashing, model="example/other-model")
    with open_agents(store_path, "reviewer", embeddings=newer) as cx:
        result = cx.search("reviewer", "user sessions", mode="hybrid")
        assert result.mode == "bm25"
        assert "made by cortex/hash-256" in result.note
        assert "example/other-model" in result.note and "cortex reindex reviewer" in result.note
        cx.store("reviewer", "stored while the vectors are stale")  # not embedded with a mismatched model
        assert newer.calls == []
        assert cx.reindex("reviewer") == {"memories": 5, "embedded": 5}
        assert newer.calls == [5]
        assert cx.search("reviewer", "user sessions", mode="hybrid").mode == "hybrid"
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing, model="example/other-model")) as cx:
        status = cx.index_status("reviewer")
        assert status.vector_model == "example/other-model" and status.vectors == 5


def test_memories_stored_without_vectors_are_embedded_by_the_next_search(store_path, hashing):
    with open_agents(store_path, "reviewer") as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    provider = Counting(hashing)
    with open_agents(store_path, "reviewer", embeddings=provider) as cx:
        result = cx.search("reviewer", "user sessions expiry", mode="semantic")
        assert result.mode == "semantic" and "Redis" in result[0].memory.content
        assert provider.calls == [4, 1]  # the missing vectors, then the query


def test_too_many_missing_vectors_ask_for_reindex(store_path, hashing, monkeypatch):
    monkeypatch.setattr("cortex.memories.MAX_LAZY_EMBED", 2)
    with open_agents(store_path, "reviewer") as cx:
        cx.store_many("reviewer", [{"content": c} for c in NOTES])
    provider = Counting(hashing)
    with open_agents(store_path, "reviewer", embeddings=provider) as cx:
        result = cx.search("reviewer", "sessions", mode="semantic")
        assert result.mode == "bm25" and "4 memories of agent 'reviewer' have no vectors" in result.note
        progress: list[tuple[int, int]] = []
        assert cx.reindex("reviewer", progress=lambda done, total: progress.append((done, total))) == {
            "memories": 4, "embedded": 4}
        assert progress == [(4, 4)]
        assert cx.search("reviewer", "sessions", mode="semantic").mode == "semantic"


def test_a_failing_provider_loses_nothing(hx, caplog):
    hx.embeddings.fail = True
    memory = hx.store("reviewer", "Sessions live in Redis")
    assert "without vectors: endpoint down" in caplog.text
    result = hx.search("reviewer", "sessions redis", mode="hybrid")
    assert result.mode == "bm25" and "embedding failed: endpoint down" in result.note
    assert result[0].memory.id == memory.id
    hx.embeddings.fail = False
    assert hx.search("reviewer", "where are sessions kept", mode="semantic")[0].memory.id == memory.id


def test_reindex_rebuilds_the_lexical_index_without_a_provider(cx):
    memory = cx.store("reviewer", "Sessions live in Redis")
    assert cx.reindex("reviewer") == {"memories": 1, "embedded": 0}
    assert cx.recall("reviewer", "redis")[0].id == memory.id
    with pytest.raises(Exception, match="invalid agent name"):
        cx.reindex("../etc")


def test_a_torn_vector_record_does_not_corrupt_later_ones(store_path, hashing):
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        first = cx.store("reviewer", NOTES[0])
    log = store_path / "cortex-index" / "reviewer" / "vectors.log"
    with open(log, "ab") as fh:  # a crash in the middle of appending the next record
        fh.write(bytes([28]) + b"01a2000000000000000000000000" + b"\x00" * 100)
    with open_agents(store_path, "reviewer", embeddings=Counting(hashing)) as cx:
        second = cx.store("reviewer", NOTES[1])
    provider = Counting(hashing)
    with open_agents(store_path, "reviewer", embeddings=provider) as cx:
        assert cx.index_status("reviewer").vectors == 2
        assert cx.search("reviewer", "monthly invoices", mode="semantic")[0].memory.id == second.id
        assert cx.search("reviewer", "user sessions expiry", mode="semantic")[0].memory.id == first.id
    assert provider.calls == [1, 1]  # the two queries: nothing re-embedded


# -- meaning (the real local model) -----------------------------------------------------------------


def test_semantic_finds_a_paraphrase_that_and_token_and_bm25_miss(mx):
    stored = mx.store_many("reviewer", [{"content": c} for c in NOTES])
    query = "where do we cache authentication state?"
    assert mx.search("reviewer", query, mode="all").hits == []
    assert mx.search("reviewer", query, mode="bm25").hits == []
    result = mx.search("reviewer", query, mode="semantic", explain=True)
    assert result.mode == "semantic" and result.note is None
    assert result[0].memory.id == stored[0].id
    assert 0 < result[0].explain["semantic"] <= 1
    hybrid = mx.search("reviewer", query)
    assert hybrid.mode == "hybrid" and hybrid[0].memory.id == stored[0].id


def test_hybrid_fuses_words_and_meaning(mx):
    lexical_only = mx.store("reviewer", "zx81 checklist")  # shares a rare word with the query, nothing else
    semantic_only = mx.store("reviewer", "Renew all credentials when there has been a security compromise")
    both = mx.store("reviewer", "zx81: rotate API keys after a security incident")
    query = "zx81 key rotation after a breach"
    hits = mx.search("reviewer", query, mode="hybrid", explain=True, rerank=False).hits
    assert hits[0].memory.id == both.id
    by_id = {h.memory.id: h.explain for h in hits}
    assert by_id[lexical_only.id]["lexical"] > 0 and by_id[semantic_only.id]["lexical"] == 0
    assert by_id[semantic_only.id]["semantic"] > 0.2  # found by meaning alone


def test_agent_start_ranks_with_hybrid_search(mx):
    mx.store_many("reviewer", [{"content": c} for c in NOTES])
    block = mx.agent_start("reviewer", task="Fix the bug where authenticated users get logged out", limit=1)
    assert "Redis" in block and block.count("\n") == 2


def test_real_vectors_persist_on_disk(store_path: Path, local):
    with open_agents(store_path, "reviewer", embeddings=Counting(local)) as cx:
        stored = cx.store_many("reviewer", [{"content": c} for c in NOTES])
    again = Counting(local)
    with open_agents(store_path, "reviewer", embeddings=again) as cx:
        assert cx.search("reviewer", "where do we cache authentication state?", mode="semantic")[0].memory.id \
            == stored[0].id
    assert again.calls == [1]


def test_unrelated_memories_are_not_returned(hx):
    hx.store_many("reviewer", [{"content": c} for c in NOTES])
    for mode in ("semantic", "hybrid"):
        result = hx.search("reviewer", "zzqx wibble", mode=mode, explain=True)
        assert result.hits == [], (mode, [(h.memory.content, h.explain) for h in result])
    related = hx.search("reviewer", "invoices every month", mode="hybrid", explain=True)
    assert related[0].memory.content == NOTES[1]
    assert all(h.explain["lexical"] > 0 or h.explain["semantic"] >= 0.15 for h in related)
    hx.fusion = Fusion(min_similarity=-1)  # the floor off: everything comes back, however unrelated
    assert len(hx.search("reviewer", "zzqx wibble", mode="semantic").hits) == 4


def test_the_block_carries_no_unrelated_memory(mx):
    mx.store_many("reviewer", [{"content": c} for c in NOTES])
    result = mx.search("reviewer", "How do I configure a Kubernetes ingress controller?", mode="semantic",
                       explain=True)
    assert all(h.explain["semantic"] >= 0.15 for h in result)
    assert len(result) < len(NOTES)
