"""The embedding vectors of a :class:`~cortex.index.memory_index.MemoryIndex` (one model's unit rows, aligned
with its documents), and those carried across a rebuild."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cortex.index.layout import IndexData, content_hash
from cortex.index.lists import Vec
from cortex.index.vectors import Rows


@dataclass(frozen=True)
class CarriedVectors:
    """Vectors kept across a rebuild: each one is reused only for a memory whose content has the same digest."""

    model: str
    ids: list[str]
    digests: np.ndarray
    rows: np.ndarray

    def apply(self, index: "IndexVectors") -> int:
        """Attach the vectors whose memory is in ``index`` with the same content; returns how many."""
        position = {memory_id: k for k, memory_id in enumerate(self.ids)}
        keep = [(memory_id, k) for memory_id in index.ids if (k := position.get(memory_id)) is not None
                and index.has_digest(memory_id, int(self.digests[k]))]
        if keep:
            index.set_vectors(self.model, [i for i, _ in keep], self.rows[[k for _, k in keep]])
        return len(keep)


class IndexVectors(IndexData):
    """Vectors of an index's memories (a base of :class:`~cortex.index.memory_index.MemoryIndex`)."""

    def set_vectors(self, model: str, memory_ids: Sequence[str], vectors: np.ndarray) -> None:
        """Attach embedding vectors (unit rows made by ``model``) to live memories; unknown ids are skipped.

        An index holds vectors of one model: adopting another one discards the vectors it held.
        """
        if len(memory_ids) == 0:
            return
        if self.vectors is None or self.vector_model != model or self.vectors.dim != vectors.shape[1]:
            self.drop_vectors()
            self.vector_model = model
            self.vectors = Rows(vectors.shape[1])
            self.vectors.extend_to(len(self.ids))
        for memory_id, row in zip(memory_ids, vectors):
            doc = self.doc_of.get(memory_id)
            if doc is not None:
                self.vectors.a[doc] = row
                self.has_vector.a[doc] = True

    def drop_vectors(self) -> None:
        """Forget every vector (the model changed)."""
        self.vector_model = None
        self.vectors = None
        self.has_vector = Vec(np.bool_, np.zeros(len(self.ids), dtype=bool))

    def has_content(self, memory_id: str, content: str) -> bool:
        """Whether the memory is live and has exactly this content (its digest)."""
        return self.has_digest(memory_id, content_hash(content))

    def has_digest(self, memory_id: str, digest: int) -> bool:
        """Whether the memory is live and its content has this digest (:func:`content_hash`)."""
        doc = self.doc_of.get(memory_id)
        return doc is not None and int(self.cols["content_hash"].a[doc]) == digest

    def vector_of(self, memory_id: str) -> np.ndarray | None:
        """The memory's vector, or None."""
        doc = self.doc_of.get(memory_id)
        if doc is None or self.vectors is None or not self.has_vector.a[doc]:
            return None
        row: np.ndarray = self.vectors.a[doc]
        return row

    def missing_vectors(self) -> list[str]:
        """Ids of live memories without a vector."""
        return self.select(~self.has_vector.view)

    def vector_count(self) -> int:
        """How many live memories have a vector."""
        return int(np.count_nonzero(self.has_vector.view & self.alive.view))

    def cosine_scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of every document's vector with the unit vector ``query`` (0 without one)."""
        if self.vectors is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        scores = self.vectors.view @ np.asarray(query, dtype=np.float32)
        return scores.astype(np.float64)

    def carried_vectors(self) -> "CarriedVectors | None":
        """This index's vectors with the content digest of each memory, to keep across a rebuild."""
        if self.vectors is None or self.vector_model is None:
            return None
        docs = np.flatnonzero(self.has_vector.view & self.alive.view)
        return CarriedVectors(self.vector_model, [self.ids[d] for d in docs],
                              self.col("content_hash")[docs].copy(), self.vectors.view[docs].copy())
