"""The embedding vectors of a :class:`~cortex.index.memory_index.MemoryIndex` (one model's unit rows, aligned
with its documents), and those carried across a rebuild."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cortex.index import ann
from cortex.index.layout import IndexData, content_hash
from cortex.index.lists import Vec
from cortex.index.vectors import Embedded, Rows
from cortex.model import Filters

#: The graph's candidates, as a multiple of the documents a ranker wants, then grown by this factor while too
#: few of them pass the filters, up to :data:`MAX_CANDIDATES`; beyond that the filters leave few documents, and
#: those are scored exactly.
OVERFETCH = 2
GROWTH = 4
MAX_CANDIDATES = 4096
#: Filters that leave fewer documents than this: those are scored exactly (as a scope this small would be).
EXACT_BELOW = 20_000


@dataclass(frozen=True)
class CarriedVectors:
    """Vectors kept across a rebuild: each one is reused only for a memory whose content has the same digest."""

    model: str
    ids: list[str]
    digests: np.ndarray
    vectors: Embedded

    def apply(self, index: "IndexVectors") -> int:
        """Attach the vectors whose memory is in ``index`` with the same content; returns how many."""
        position = {memory_id: k for k, memory_id in enumerate(self.ids)}
        keep = [(memory_id, k) for memory_id in index.ids if (k := position.get(memory_id)) is not None
                and index.has_digest(memory_id, int(self.digests[k]))]
        if keep:
            index.set_vectors(self.model, [i for i, _ in keep], self.vectors.take([k for _, k in keep]))
        return len(keep)


class IndexVectors(IndexData):
    """Vectors of an index's memories (a base of :class:`~cortex.index.memory_index.MemoryIndex`)."""

    def set_vectors(self, model: str, memory_ids: Sequence[str], vectors: Embedded | np.ndarray) -> None:
        """Attach embedding vectors (unit rows made by ``model``, with the later windows of long memories) to
        live memories, replacing the vectors they had; unknown ids are skipped.

        An index holds vectors of one model: adopting another one discards the vectors it held.
        """
        if len(memory_ids) == 0:
            return
        if isinstance(vectors, np.ndarray):
            vectors = Embedded(vectors)
        dim = vectors.rows.shape[1]
        if self.vectors is None or self.vector_model != model or self.vectors.dim != dim:
            self.drop_vectors()
            self.vector_model = model
            self.vectors = Rows(dim)
            self.vectors.extend_to(len(self.ids))
        touched, later = [], []
        for k, (memory_id, row) in enumerate(zip(memory_ids, vectors.rows)):
            doc = self.doc_of.get(memory_id)
            if doc is not None:
                self.vectors.a[doc] = row
                self.has_vector.a[doc] = True
                touched.append(doc)
                later += [(doc, window) for window in vectors.windows(k)]
        if self.windows is not None and touched:
            owners = self.window_doc.view
            owners[np.isin(owners, touched)] = -1  # the windows of what they had
        if later:
            if self.windows is None:
                self.windows = Rows(dim)
            for doc, window in later:
                self.windows.append(window)
                self.window_doc.append(doc)
        if self.ann is not None:
            self.ann.touched(np.array(touched, dtype=np.int64))

    def drop_vectors(self) -> None:
        """Forget every vector (the model changed)."""
        self.vector_model = None
        self.vectors = None
        self.windows = None
        self.window_doc = Vec(np.int64)
        self.ann = None
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

    def keep(self, docs: np.ndarray, filters: Filters) -> np.ndarray:
        """Which of ``docs`` pass ``filters`` (:meth:`cortex.index.ranking.Ranking.keep`)."""
        raise NotImplementedError

    def cosine_scores(self, query: np.ndarray, filters: Filters | None = None, depth: int = 0) -> np.ndarray:
        """Cosine similarity of the documents' vectors with the unit vector ``query`` (0 without one).

        With ``filters`` and ``depth`` (how many of the best passing documents the caller ranks), a scope
        with a vector graph scores only the graph's candidates and the documents it does not cover yet; the
        others get ``-inf`` (:meth:`cosines_at` scores any of them exactly). Without a graph: every document.
        """
        graph = self.ann
        if self.vectors is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        if filters is None or depth <= 0 or graph is None or graph.dim != self.vectors.dim or not graph.usable():
            scores = (self.vectors.view @ np.asarray(query, dtype=np.float32)).astype(np.float64)
            best = self._best_windows(np.asarray(query, dtype=np.float32))
            if best is not None:
                np.maximum.at(scores, best[0], best[1])
            return scores
        return self._approximate(graph, np.asarray(query, dtype=np.float32), filters, depth)

    def _best_windows(self, query: np.ndarray, docs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """(document, cosine) of the later windows of the live documents (of ``docs`` only, when given), or
        None when there are none."""
        if self.windows is None or self.windows.n == 0:
            return None
        owners = self.window_doc.view
        live = owners >= 0
        live[live] = self.alive.view[owners[live]]
        if docs is not None:
            live &= np.isin(owners, docs)
        rows = np.flatnonzero(live)
        if len(rows) == 0:
            return None
        return owners[rows], (self.windows.a[rows] @ query).astype(np.float64)

    def _approximate(self, graph: ann.AnnGraph, query: np.ndarray, filters: Filters, depth: int) -> np.ndarray:
        n = len(self.ids)
        usable = self.has_vector.view & self.alive.view
        outside = graph.outside(n)
        k, share = OVERFETCH * depth, 1.0
        if _narrowing(filters):  # how many documents pass: the graph's candidates are fetched in proportion
            passing = np.flatnonzero(usable)
            passing = passing[self.keep(passing, filters)]
            share = len(passing) / max(int(np.count_nonzero(usable)), 1)
            k = int(k / max(share, 1e-9))
            if len(passing) < EXACT_BELOW:  # as few as a small scope has: scored like one
                k = MAX_CANDIDATES + 1
        best = self._best_windows(query)
        # a long memory whose best window is not its first: the graph (of first windows) may not propose it
        windowed = best[0][np.argsort(-best[1])[: max(depth, 1) * OVERFETCH]] if best is not None else outside[:0]
        while k <= MAX_CANDIDATES:
            found = graph.search(query, k)
            docs = np.unique(np.concatenate([found, outside, windowed]))
            docs = docs[usable[docs]]
            if np.count_nonzero(self.keep(docs, filters)) >= depth or k >= graph.size:
                break
            k *= GROWTH
        else:  # few documents pass the filters: all of them, exactly
            docs = np.flatnonzero(usable)
            docs = docs[self.keep(docs, filters)]
        scores = np.full(n, -np.inf, dtype=np.float64)
        scores[docs] = self.cosines_at(docs, query)
        return scores

    def cosines_at(self, docs: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Exact cosine similarity of these documents' vectors with the unit vector ``query``."""
        if self.vectors is None:
            return np.zeros(len(docs), dtype=np.float64)
        query = np.asarray(query, dtype=np.float32)
        scores: np.ndarray = (self.vectors.a[docs] @ query).astype(np.float64)
        best = self._best_windows(query, docs)
        if best is not None:
            order = np.argsort(docs, kind="stable")
            at = order[np.searchsorted(docs[order], best[0])]
            np.maximum.at(scores, at, best[1])
        return scores

    def ann_due(self) -> bool:
        """Whether the next save should build the vector graph (large enough, and none usable)."""
        return self.vectors is not None and ann.available() and self.vector_count() >= ann.MIN_VECTORS \
            and (self.ann is None or self.ann.failed)

    def carried_vectors(self) -> "CarriedVectors | None":
        """This index's vectors with the content digest of each memory, to keep across a rebuild."""
        if self.vectors is None or self.vector_model is None:
            return None
        docs = np.flatnonzero(self.has_vector.view & self.alive.view)
        return CarriedVectors(self.vector_model, [self.ids[d] for d in docs],
                              self.col("content_hash")[docs].copy(), self.embedded(docs))

    def embedded(self, docs: np.ndarray) -> Embedded:
        """The vectors of these documents, their later windows included."""
        assert self.vectors is not None
        if self.windows is None or self.windows.n == 0:
            return Embedded(self.vectors.view).take(docs)
        live = self.window_doc.view >= 0  # not the windows of vectors since replaced
        return Embedded(self.vectors.view, self.windows.view[live], self.window_doc.view[live]).take(docs)


def _narrowing(filters: Filters) -> bool:
    """Whether ``filters`` may leave a small share of the documents (the default time filter rarely does)."""
    return bool(filters.types is not None or filters.projects is not None or filters.sources is not None
                or filters.tags or filters.as_of is not None)

