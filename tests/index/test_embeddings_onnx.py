"""The default local embedding model: all-MiniLM-L6-v2 as int8 ONNX on ONNX Runtime, without torch (the real
model, no mocks). Where the torch extra is installed, its vectors are compared with the fp32 torch build's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from cortex import config
from cortex.embeddings import (
    MAX_TOKENS,
    ONNX_MODEL,
    SHIPPED_MODEL,
    EmbeddingError,
    EmbeddingProvider,
    OnnxEmbeddings,
    make_provider,
)

from tests.conftest import open_agents
from tests.paths import ROOT

ROOT = ROOT

TEXTS = [
    "How do I reset my password?",
    "Steps to recover the login credentials of an account",
    "The cat sat on the mat in the sun",
    "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "The login service keeps user sessions in Redis with a 30 minute expiry",
    "Database migrations must be reviewed by the data team before they are merged into main",
]


def test_loads_offline_without_torch_in_a_new_process(local):
    """A fresh process with every socket refused embeds with the default provider and never imports torch."""
    script = textwrap.dedent("""
        import socket, sys

        def refuse(*args, **kwargs):
            raise OSError("network use during model loading")

        socket.socket = refuse
        socket.create_connection = refuse
        from cortex.embeddings import make_provider

        provider = make_provider("auto")
        vectors = provider.embed(["offline please"])
        print(provider.model, vectors.shape[1], "torch" in sys.modules, "sentence_transformers" in sys.modules)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("CORTEX_EMBEDDINGS", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [ONNX_MODEL, "384", "False", "False"]


def test_vectors_are_unit_length_and_the_same_alone_or_in_a_batch(local):
    assert isinstance(local, EmbeddingProvider)
    batch = local.embed(TEXTS)  # more than 4 texts: the batch session (2 threads)
    assert batch.shape == (len(TEXTS), 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, rtol=1e-5)
    alone = np.vstack([local.embed([text]) for text in TEXTS])  # the query session (1 thread)
    np.testing.assert_allclose(alone, batch, atol=1e-6)
    assert local.embed([]).shape[0] == 0


def test_tokenized_without_padding_and_truncated_at_256(local):
    model = local._load()
    short = model.tokenizer.encode("a short text")
    assert 0 not in short.ids and len(short.ids) < 10  # [PAD] is id 0: the shipped file would pad to 128
    long = model.tokenizer.encode(" ".join(f"word{i}" for i in range(400)))
    first = model._window(long.ids, 0)
    assert len(first) == MAX_TOKENS == 256
    assert first[0] == long.ids[0] and first[-1] == long.ids[-1] == 102  # [CLS] ... [SEP], as truncation keeps
    assert first[1:-1] == long.ids[1:255]
    vectors = local.embed(["alpha " * 300, "alpha " * 300 + "omega " * 300])  # a query: its first window
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)


def test_a_long_text_is_embedded_in_overlapping_windows_covering_all_of_it(local):
    from cortex.embeddings import window_starts

    assert window_starts(254, 254) == [0]
    assert window_starts(600, 254) == [0, 190, 346]  # a quarter overlaps; the last window ends with the text
    many = window_starts(100_000, 254)
    assert len(many) == 32 and many[0] == 0 and many[-1] == 100_000 - 254
    head = "The deploy script lives in ops/deploy.sh and runs on every tag. " * 40  # ~560 tokens
    tail = "Gotcha: the staging database password rotates every Monday at 03:00 UTC."
    short = "a short memory"
    embedded = local.embed_windows([short, head + tail])
    assert embedded.rows.shape == (2, 384) and len(embedded.windows(0)) == 0
    later = embedded.windows(1)
    assert len(later) >= 2  # the tail is in the last window
    np.testing.assert_allclose(embedded.rows, local.embed([short, head + tail]), atol=1e-6)  # the first window
    query = local.embed(["when does the staging database password rotate?"])[0]
    assert float(later[-1] @ query) > float(embedded.rows[1] @ query) + 0.1
    np.testing.assert_allclose(np.linalg.norm(later, axis=1), 1.0, rtol=1e-5)


def test_the_onnx_build_has_its_own_model_id():
    assert ONNX_MODEL != SHIPPED_MODEL
    assert OnnxEmbeddings().model == ONNX_MODEL


def test_auto_means_the_onnx_model(monkeypatch, local):
    monkeypatch.delenv("CORTEX_EMBEDDINGS", raising=False)
    assert config.resolve_embeddings("auto") == "local"
    provider = make_provider("auto")
    assert isinstance(provider, OnnxEmbeddings) and provider.model == ONNX_MODEL


def test_another_onnx_model_directory_is_its_own_model(tmp_path, local):
    (tmp_path / "model.onnx").symlink_to(local.model_file)
    (tmp_path / "tokenizer.json").symlink_to(local.tokenizer_file)
    other = make_provider("local", model_path=str(tmp_path))
    assert isinstance(other, OnnxEmbeddings) and other.model == str(tmp_path.resolve())
    np.testing.assert_allclose(other.embed(TEXTS[:2]), local.embed(TEXTS[:2]), atol=1e-6)
    (tmp_path / "tokenizer.json").unlink()
    with pytest.raises(EmbeddingError, match="tokenizer.json does not exist"):
        OnnxEmbeddings(tmp_path)


def test_a_damaged_model_file_is_refused(tmp_path, local, monkeypatch):
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(local.model_file.read_bytes()[:-1] + b"\0")
    provider = OnnxEmbeddings()
    monkeypatch.setattr(provider, "model_file", damaged)
    with pytest.raises(EmbeddingError, match="sha256"):
        provider.embed(["x"])


def test_a_checked_model_file_is_not_hashed_again_until_it_changes(tmp_path, local, monkeypatch):
    """The sha256 of the 23 MB model (~30 ms per process) is computed once per file version: the check is
    remembered by size and modification time, and a file changed in place is checked again and refused."""
    import hashlib

    from cortex import embeddings

    copy = tmp_path / "model.onnx"
    copy.write_bytes(local.model_file.read_bytes())
    embeddings._check_sha256(copy, embeddings.ONNX_SHA256)
    assert str(copy) in (config.cache_dir() / "verified-models.json").read_text()

    def no_hashing(*args: object) -> None:
        raise AssertionError("hashed again")

    with monkeypatch.context() as patch:
        patch.setattr(hashlib, "sha256", no_hashing)
        embeddings._check_sha256(copy, embeddings.ONNX_SHA256)  # remembered
    data = bytearray(copy.read_bytes())
    data[-1] ^= 1
    copy.write_bytes(bytes(data))  # same size, a new modification time
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 1_000_000))
    with pytest.raises(EmbeddingError, match="sha256"):
        embeddings._check_sha256(copy, embeddings.ONNX_SHA256)


def test_a_query_session_without_graph_optimizations_gives_the_same_vectors(local):
    """A one-shot process (a CLI command) embeds its query on a session without ONNX Runtime's graph
    optimizations (~0.12 s less to create); its vectors are the optimized session's, to float rounding."""
    from cortex.embeddings import _ONNX_LOADED, _OnnxModel

    provider = OnnxEmbeddings()
    # a model of its own, as in a new process (the fixture's is shared and has embedded already)
    model = _ONNX_LOADED[provider._key()] = _OnnxModel(provider.model_file, provider.tokenizer_file,
                                                       provider.max_tokens, None)
    quick = provider.embed(TEXTS[:4])  # the process's first call, a few texts, no warm_up: the quick session
    assert list(model._sessions) == [(1, False)]
    again = provider.embed(TEXTS[:4])  # later calls: the optimized session
    assert list(model._sessions) == [(1, False), (1, True)]
    np.testing.assert_allclose(quick, again, atol=2e-6)
    provider.warm_up()
    provider._warming.join()
    assert provider._long_lived and (1, True) in model._sessions  # a server: the optimized one from then on


def test_semantic_search_finds_a_paraphrase_with_the_default_model(local):
    with open_agents(None, "reviewer", embeddings=local) as cx:
        stored = cx.store_many("reviewer", [{"content": c} for c in TEXTS[2:]])
        query = "where do we cache authentication state?"
        assert cx.search("reviewer", query, mode="bm25").hits == []
        result = cx.search("reviewer", query, mode="semantic")
        assert result.mode == "semantic" and result[0].memory.id == stored[2].id


def test_close_to_the_torch_fp32_vectors(local, torch_local):
    onnx, torch = local.embed(TEXTS), torch_local.embed(TEXTS)
    cosines = (onnx * torch).sum(axis=1)
    assert cosines.min() >= 0.998, cosines


def test_the_torch_build_embeds_the_same_windows_as_the_onnx_one(local, torch_local):
    """A long memory is windowed alike by both builds (same starts, one vector each, close to the ONNX ones), so
    switching provider keeps what search can see of it."""
    head = "The deploy script lives in ops/deploy.sh and runs on every tag. " * 40
    texts = ["a short memory", head + "Gotcha: the staging database password rotates every Monday at 03:00 UTC."]
    onnx, torch = local.embed_windows(texts), torch_local.embed_windows(texts)
    assert len(torch.windows(0)) == 0 and len(torch.windows(1)) == len(onnx.windows(1)) >= 2
    np.testing.assert_allclose(torch.rows, torch_local.embed(texts), atol=1e-5)
    cosines = (onnx.windows(1) * torch.windows(1)).sum(axis=1)
    assert cosines.min() >= 0.99, cosines


def test_switching_from_torch_to_onnx_re_embeds_and_never_mixes(store_path, local, torch_local):
    with open_agents(store_path, "reviewer", embeddings=torch_local) as cx:
        cx.store_many("reviewer", [{"content": c} for c in TEXTS])
        assert cx.index_status("reviewer").vector_model == SHIPPED_MODEL
    with open_agents(store_path, "reviewer", embeddings=local) as cx:
        stale = cx.search("reviewer", "authentication state", mode="semantic")
        assert stale.mode == "bm25" and SHIPPED_MODEL in stale.note and "reindex" in stale.note
        cx.store("reviewer", "stored while the vectors are of the other build")
        assert cx.index_status("reviewer").vector_model == SHIPPED_MODEL  # not one ONNX vector among them
        assert cx.reindex("reviewer") == {"memories": len(TEXTS) + 1, "embedded": len(TEXTS) + 1}
        status = cx.index_status("reviewer")
        assert status.vector_model == ONNX_MODEL and status.vectors == len(TEXTS) + 1
        assert cx.search("reviewer", "where do we cache authentication state?", mode="semantic").mode == "semantic"
    with open_agents(store_path, "reviewer", embeddings=local) as cx:
        assert cx.index_status("reviewer").vector_model == ONNX_MODEL
