"""Writes embed without holding the repository's lock (the write protocol in :mod:`cortex.memories`): a
``store_many`` whose embedding is held lets recalls through, in process; a consolidation's new memories are embedded
ahead of its write and not again under the lock."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cortex import Cortex
from cortex.embeddings import HashEmbeddings


class HeldEmbeddings(HashEmbeddings):
    """The hash provider whose batches (more than one text) wait for ``go``; counts the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.started, self.go = threading.Event(), threading.Event()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        if len(texts) > 1:
            self.started.set()
            assert self.go.wait(60), "never released"
        return super().embed(texts)


def test_a_recall_runs_while_store_many_embeds(tmp_path: Path) -> None:
    provider = HeldEmbeddings()
    with Cortex.open(tmp_path / "store", embeddings=provider) as cx:
        cx.agents.register("dev")
        cx.store("dev", "Deploy with blue green switches")
        writer = threading.Thread(target=cx.store_many, args=("dev", [{"content": f"note {i} on caching"}
                                                                      for i in range(50)]))
        writer.start()
        try:
            assert provider.started.wait(60)
            assert [m.content for m in cx.recall("dev", "deploy")] == ["Deploy with blue green switches"]
            assert cx.recall("dev", "caching") == []  # nothing of the batch before its vectors are made
            assert writer.is_alive()
        finally:
            provider.go.set()
            writer.join(60)
        assert len(cx.recall("dev", "caching", limit=100)) == 50
        assert cx.index_status("dev").vectors == 51


def test_vectors_embedded_ahead_are_used_by_the_write(tmp_path: Path) -> None:
    provider = HeldEmbeddings()
    provider.go.set()
    with Cortex.open(tmp_path / "store", embeddings=provider) as cx:
        cx.agents.register("dev")
        cx._memories.embed_ahead(["a merged summary of caching", "another summary"])
        before = len(provider.texts)
        cx.store_many("dev", [{"content": "a merged summary of caching"}, {"content": "another summary"}])
        assert len(provider.texts) == before  # not embedded again
        assert cx.index_status("dev").vectors == 2
        top = cx.search("dev", "merged summary caching", mode="semantic")[0]
        assert top.memory.content == "a merged summary of caching"


def test_a_write_embeds_only_what_was_not_ahead(tmp_path: Path) -> None:
    provider = HeldEmbeddings()
    provider.go.set()
    with Cortex.open(tmp_path / "store", embeddings=provider) as cx:
        cx.agents.register("dev")
        cx._memories.embed_ahead(["a merged summary of caching"])
        before = len(provider.texts)
        cx.store_many("dev", [{"content": "a merged summary of caching"}, {"content": "a fresh note on queues"}])
        assert provider.texts[before:] == ["a fresh note on queues"]  # the ahead one is not embedded again
        assert cx.index_status("dev").vectors == 2
        for query, content in (("merged summary caching", "a merged summary of caching"),
                               ("fresh note queues", "a fresh note on queues")):
            assert cx.search("dev", query, mode="semantic")[0].memory.content == content
