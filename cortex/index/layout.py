"""What a :class:`~cortex.index.memory_index.MemoryIndex` holds: the per-document columns and their codes, the
index's time unit, and its state (ids, columns, postings, vectors) with what every part of it reads."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from cortex.index.lists import PostingLists, Vec
from cortex.index.ann import AnnGraph
from cortex.index.texts import Texts
from cortex.index.vectors import Rows
from cortex.model import MemoryType, Source

TYPE_CODES = {t: i for i, t in enumerate(MemoryType)}
#: The types by code (the ``type_code`` column).
TYPES = list(MemoryType)
SOURCE_CODES = {s: i for i, s in enumerate(Source)}
#: The sources by code (the ``source`` column).
SOURCES = list(Source)
#: Time sentinels of the columns: "never" (no expiry, still valid) and "none" (not updated, never validated).
NEVER = np.iinfo(np.int64).max
NONE = np.iinfo(np.int64).min

#: The per-document columns (name -> dtype), saved in snapshots. ``alive`` and ``has_vector`` are masks kept
#: beside them.
COLUMNS: dict[str, Any] = {
    "usage": np.int64,
    "used": np.int64,  # drawn on by the agent's output (usedCount)
    "last_used": np.int64,  # microseconds since the epoch
    "created": np.int64,
    "confidence": np.float64,
    "type_code": np.int8,
    "project": np.int32,  # code into ``projects``
    "doc_len": np.int32,  # analysed terms
    "content_hash": np.int64,  # tells an upsert whether the content changed
    "source": np.int8,
    "expires": np.int64,  # NEVER when it does not expire
    "valid_from": np.int64,
    "valid_until": np.int64,  # NEVER while current (not superseded)
    "version": np.int64,  # up to 2**53, as imports accept
    "updated": np.int64,  # the creation when never updated
    "validated": np.int64,  # NONE when never validated
}
#: Fields most memories do not have, kept per id (not per document: they survive renumbering).
EXTRAS = ("tags", "metadata", "superseded_by", "superseded_reason", "author")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Exact microseconds since the Unix epoch (the index's time unit)."""
    return (moment - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """The inverse of :func:`to_micros`."""
    return _EPOCH + timedelta(microseconds=int(micros))


def micros_or(moment: datetime | None, default: int) -> int:
    """``moment`` in microseconds, or ``default`` when there is none."""
    return default if moment is None else to_micros(moment)


def time_or_none(micros: Any) -> datetime | None:
    """The moment of a time column's value, or None for the sentinels :data:`NEVER` and :data:`NONE`."""
    value = int(micros)
    return None if value in (NEVER, NONE) else from_micros(value)


def content_hash(content: str) -> int:
    """A stable 64-bit digest of the content (not Python's salted ``hash``)."""
    digest = hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class IndexData:
    """The state of one scope's index and the reads every part of it shares (a base of
    :class:`~cortex.index.memory_index.MemoryIndex`)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        # id -> document of the live memories; None: not built yet (a loaded snapshot builds it on first use:
        # a recall needs documents -> ids only, and the dict costs 0.1-0.2 s and ~100 bytes a memory)
        self._doc_of: dict[str, int] | None = {}
        self._hint: dict[str, int] = {}  # until then: the documents of the ids reads returned (see _named)
        self.cols: dict[str, Vec] = {name: Vec(dtype) for name, dtype in COLUMNS.items()}
        self.alive = Vec(np.bool_)
        self.has_vector = Vec(np.bool_)
        self.projects: list[str] = []
        self.project_code: dict[str, int] = {}
        #: whitespace words of the normalised content (AND-token recall) and analysed terms (BM25)
        self.raw = PostingLists()
        self.terms = PostingLists()
        #: tag -> documents (tag filters), and the fields few memories have, by id
        self.tag_lists = PostingLists()
        self.extras: dict[str, dict[str, Any]] = {}
        #: the content of each document (reads load their hits from here, not from the store)
        self.texts = Texts()
        #: embedding vectors (unit rows, aligned with documents) of one model; zero rows where missing
        self.vector_model: str | None = None
        self.vectors: Rows | None = None
        #: the later windows of long memories (their first is in ``vectors``), each with its document in
        #: ``window_doc`` (-1: replaced); a document's cosine is the best of its windows
        self.windows: Rows | None = None
        self.window_doc = Vec(np.int64)
        #: the approximate nearest-neighbour graph of those vectors (large scopes only; see cortex.index.ann)
        self.ann: AnnGraph | None = None
        #: Memory subjects in the store that the index cannot hold (incomplete, not written by Cortex),
        #: counted at the last rebuild, so the store-count check does not rebuild forever because of them.
        self.foreign = 0
        #: The number and token of the store's latest change (of this scope) that the index reflects.
        self.seq = 0
        self.token = ""
        self._lengths: tuple[float, int] | None = None  # BM25: total analysed length and count of live docs
        self._replaced: dict[str, set[str]] | None = None  # successor id -> ids it superseded (built lazily)
        # which documents are current (valid, not superseded, not expired) for any moment in [from, until):
        # one gather per read instead of five column checks on every candidate; any write drops it
        self._current: tuple[int, int, np.ndarray] | None = None
        # each document's rank by (usage, last use, creation, number), the documents whose keys changed since,
        # and how many (see Ranking._priorities)
        self._prio: tuple[np.ndarray, np.ndarray, int] | None = None
        # token -> (postings stamp, documents, occurrences, dense occurrences or None, bytes): see Ranking._hits;
        # the stamp is (merges, documents): postings change only by new documents and by merges
        self._hit_cache: OrderedDict[str, tuple[tuple[int, int], np.ndarray, np.ndarray, np.ndarray | None, int]] = \
            OrderedDict()
        self._hit_bytes = 0
        self._epoch = 0

    @property
    def doc_of(self) -> dict[str, int]:
        """id -> document, for the live memories."""
        if self._doc_of is None:
            ids, alive = self.ids, self.alive.view
            self._doc_of = {ids[d]: d for d in np.flatnonzero(alive).tolist()} if not alive.all() else \
                {mid: d for d, mid in enumerate(ids)}
            self._hint = {}
        return self._doc_of

    @doc_of.setter
    def doc_of(self, value: dict[str, int]) -> None:
        self._doc_of = value

    def _named(self, doc: int) -> str:
        """The id of document ``doc``, which a read returns (and :meth:`find_doc` then finds without the map)."""
        memory_id = self.ids[doc]
        if self._doc_of is None:
            if len(self._hint) >= 100_000:
                self._hint.clear()
            self._hint[memory_id] = doc
        return memory_id

    def doc(self, memory_id: str) -> int:
        """The document of a live memory (``KeyError`` if none); see :meth:`find_doc`."""
        found = self.find_doc(memory_id)
        if found is None:
            raise KeyError(memory_id)
        return found

    def find_doc(self, memory_id: str) -> int | None:
        """The document of a live memory (None: not live), without building the map for the ids reads returned."""
        if self._doc_of is None:
            doc = self._hint.get(memory_id)
            # documents are renumbered by merges: the hint holds only if the live document there is still it
            if doc is not None and doc < len(self.ids) and self.ids[doc] == memory_id and bool(self.alive.view[doc]):
                return doc
        return self.doc_of.get(memory_id)

    def col(self, name: str) -> np.ndarray:
        """The live view of a column (one value per document, dead ones included)."""
        return self.cols[name].view

    # -- size ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of live memories."""
        return len(self._doc_of) if self._doc_of is not None else int(np.count_nonzero(self.alive.view))

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self.doc_of

    # -- columns ---------------------------------------------------------------------------------

    def columns(self, memory_ids: Sequence[str], names: Sequence[str]) -> dict[str, np.ndarray]:
        """The values of the named columns for these (live) memories, in order."""
        docs = np.fromiter((self.doc(i) for i in memory_ids), dtype=np.int64, count=len(memory_ids))
        return {name: self.cols[name].view[docs] for name in names}

    def select(self, mask: np.ndarray) -> list[str]:
        """Ids of the live documents where ``mask`` holds."""
        return [self.ids[i] for i in np.flatnonzero(mask & self.alive.view)]

    def type_counts(self) -> dict[MemoryType, int]:
        """How many live memories of each type."""
        counts = np.bincount(self.col("type_code")[self.alive.view], minlength=len(TYPE_CODES))
        return {t: int(counts[code]) for t, code in TYPE_CODES.items()}

    # -- compaction ------------------------------------------------------------------------------

    def merge(self) -> None:
        """Fold the deltas into the CSR bases, dropping forgotten memories and renumbering documents."""
        self._lengths = None
        self._current = None
        self._epoch += 1
        alive = self.alive.view.copy()
        new_doc = np.cumsum(alive, dtype=np.int64) - 1
        self.raw.merge(alive, new_doc)
        self.terms.merge(alive, new_doc)
        self.tag_lists.merge(alive, new_doc)
        if not alive.all():
            self._prio = None
        if self.texts.tail or not alive.all():
            self.texts.merge(np.flatnonzero(alive))
        if not alive.all():
            keep_docs = np.flatnonzero(alive)
            self.ids = [self.ids[i] for i in keep_docs]
            self.doc_of = {mid: i for i, mid in enumerate(self.ids)}
            self.cols = {name: Vec(vec.a.dtype, vec.view[keep_docs]) for name, vec in self.cols.items()}
            self.alive = Vec(np.bool_, np.ones(len(keep_docs), dtype=bool))
            self.has_vector = Vec(np.bool_, self.has_vector.view[keep_docs])
            if self.vectors is not None:
                self.vectors = Rows(self.vectors.dim, self.vectors.view[keep_docs])
            if self.windows is not None:
                owners = self.window_doc.view
                kept = np.flatnonzero((owners >= 0) & alive[np.maximum(owners, 0)])
                self.windows = Rows(self.windows.dim, self.windows.view[kept])
                self.window_doc = Vec(np.int64, new_doc[owners[kept]])
            if self.ann is not None:
                self.ann.renumber(alive, new_doc)
