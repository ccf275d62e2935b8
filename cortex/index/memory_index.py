"""The derived index of one scope's memories: postings over whitespace words (AND-token recall), postings
over analysed terms (BM25), embedding vectors, and one numpy column per field that reads filter and rank by.

Why whitespace words: a query token never contains whitespace, so each occurrence of it in a memory lies
inside one whitespace-separated word of the (normalised) content. Matching a token is therefore a
substring search over the *vocabulary* (``str.find`` over the words joined by newlines), then a
union of those words' postings, weighted by how often the token occurs in each word. That gives the exact
contract semantics (``auth`` matches ``OAuth2``, occurrences counted like ``str.count``) without reading
any memory.

Layout: a compressed (CSR) base of postings loaded from a snapshot, plus a small per-word delta for what was
added since; forgotten memories are masked out and dropped at the next merge. The per-document fields are
declared once, in :data:`COLUMNS`; adding a field means one entry there and one in :func:`_row`.
"""

from __future__ import annotations

import hashlib
import io
import json
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from cortex.files import atomic_writer, read_regular
from cortex.index.analyzer import analyze_normalized
from cortex.index.lists import PostingLists, Vec
from cortex.index.vectors import Rows
from cortex.model import Filters, Memory, MemoryType, Source
from cortex.text import content_words, normalize

#: Bumped whenever the snapshot layout or the normalisation changes; older snapshots are rebuilt.
FORMAT_VERSION = 9
TYPE_CODES = {t: i for i, t in enumerate(MemoryType)}
_TYPES = list(MemoryType)
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
_EXTRAS = ("tags", "metadata", "superseded_by", "superseded_reason", "author")
_MASKS = ("alive", "has_vector")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Exact microseconds since the Unix epoch (the index's time unit)."""
    return (moment - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """The inverse of :func:`to_micros`."""
    return _EPOCH + timedelta(microseconds=int(micros))


def combined_stats(parts: Sequence[tuple[int, float, int, dict[str, int]]]) -> tuple[int, float, dict[str, int]]:
    """The BM25 collection statistics (N, average length, document frequencies) of several indexes together."""
    n_docs = sum(p[0] for p in parts)
    live = sum(p[2] for p in parts)
    df: dict[str, int] = {}
    for part in parts:
        for term, count in part[3].items():
            df[term] = df.get(term, 0) + count
    return n_docs, (sum(p[1] for p in parts) / live if live else 0.0), df


def _micros_or(moment: datetime | None, default: int) -> int:
    return default if moment is None else to_micros(moment)


def _time_or_none(micros: Any) -> datetime | None:
    value = int(micros)
    return None if value in (NEVER, NONE) else from_micros(value)


@dataclass(frozen=True)
class CarriedVectors:
    """Vectors kept across a rebuild: each one is reused only for a memory whose content has the same digest."""

    model: str
    ids: list[str]
    digests: np.ndarray
    rows: np.ndarray

    def apply(self, index: "MemoryIndex") -> int:
        """Attach the vectors whose memory is in ``index`` with the same content; returns how many."""
        position = {memory_id: k for k, memory_id in enumerate(self.ids)}
        keep = [(memory_id, k) for memory_id in index.ids if (k := position.get(memory_id)) is not None
                and index.has_digest(memory_id, int(self.digests[k]))]
        if keep:
            index.set_vectors(self.model, [i for i, _ in keep], self.rows[[k for _, k in keep]])
        return len(keep)


def content_hash(content: str) -> int:
    """A stable 64-bit digest of the content (not Python's salted ``hash``)."""
    digest = hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class MemoryIndex:
    """Postings, vectors and ranking fields for one scope's memories (in memory; see ``save``/``load``)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.doc_of: dict[str, int] = {}
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
        #: embedding vectors (unit rows, aligned with documents) of one model; zero rows where missing
        self.vector_model: str | None = None
        self.vectors: Rows | None = None
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

    def col(self, name: str) -> np.ndarray:
        """The live view of a column (one value per document, dead ones included)."""
        return self.cols[name].view

    # -- size ------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of live memories."""
        return len(self.doc_of)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self.doc_of

    # -- writes ----------------------------------------------------------------------------------

    def _row(self, memory: Memory, doc_len: int) -> dict[str, Any]:
        """The column values of ``memory`` (computed before anything changes, so a failure changes nothing)."""
        created = to_micros(memory.created_at)
        return {
            "usage": memory.usage_count,
            "used": memory.used_count,
            "last_used": to_micros(memory.last_used_at),
            "created": created,
            "confidence": memory.confidence,
            "type_code": TYPE_CODES[memory.type],
            "project": self._project_code(memory.project),
            "doc_len": doc_len,
            "content_hash": content_hash(memory.content),
            "source": SOURCE_CODES[memory.source],
            "expires": _micros_or(memory.expires_at, NEVER),
            "valid_from": _micros_or(memory.valid_from, created),  # both default to the creation
            "valid_until": _micros_or(memory.valid_until, NEVER),
            "version": memory.version,
            "updated": _micros_or(memory.updated_at, created),
            "validated": _micros_or(memory.validated_at, NONE),
        }

    def _unlink(self, memory_id: str) -> None:
        """Drop ``memory_id`` from the successor map (before its extras change or go)."""
        successor = self.extras.get(memory_id, {}).get("superseded_by")
        if successor is not None and self._replaced is not None:
            self._replaced.get(successor, set()).discard(memory_id)

    def _set_extras(self, memory: Memory) -> None:
        self._unlink(memory.id)
        if memory.superseded_by is not None and self._replaced is not None:
            self._replaced.setdefault(memory.superseded_by, set()).add(memory.id)
        extra = {name: value for name in _EXTRAS if (value := getattr(memory, name))}
        if memory.scope == "agent" and memory.author in (None, memory.agent):
            extra.pop("author", None)  # the default: an agent's own memory is written by the agent
        if extra:
            self.extras[memory.id] = extra
        else:
            self.extras.pop(memory.id, None)

    def add(self, memory: Memory) -> None:
        """Index a memory; an id already present is replaced."""
        self._lengths = None
        self._current = None
        normalized = normalize(memory.content)
        counts = Counter(content_words(normalized))
        terms = analyze_normalized(normalized)
        row = self._row(memory, len(terms))
        if memory.id in self.doc_of:
            self.remove(memory.id)
        doc = len(self.ids)
        self.ids.append(memory.id)
        self.doc_of[memory.id] = doc
        for name, value in row.items():
            self.cols[name].append(value)
        self.alive.append(True)
        self.has_vector.append(False)
        if self.vectors is not None:
            self.vectors.append(None)
        self.raw.add(doc, counts)
        self.terms.add(doc, Counter(terms))
        if memory.tags:
            self.tag_lists.add(doc, dict.fromkeys(memory.tags, 1))
        self._set_extras(memory)
        if self.raw.needs_merge() or self.terms.needs_merge():
            self.merge()

    def add_many(self, memories: Iterable[Memory]) -> None:
        """Index several memories."""
        for memory in memories:
            self.add(memory)

    def remove(self, memory_id: str) -> bool:
        """Forget a memory; its postings are masked until the next merge."""
        doc = self.doc_of.pop(memory_id, None)
        if doc is None:
            return False
        self.alive.a[doc] = False
        self._lengths = None
        self._current = None
        self._unlink(memory_id)
        self.extras.pop(memory_id, None)
        return True

    def upsert(self, memory: Memory) -> None:
        """Make the index agree with ``memory`` as the store has it: fields in place, and re-indexed (its
        vector dropped) when the content changed."""
        doc = self.doc_of.get(memory.id)
        if doc is None or self.cols["content_hash"].a[doc] != content_hash(memory.content) \
                or tuple(self.extras.get(memory.id, {}).get("tags", ())) != memory.tags:
            vector = self.vector_of(memory.id) if doc is not None and self.cols["content_hash"].a[doc] == \
                content_hash(memory.content) else None
            self.add(memory)
            if vector is not None and self.vector_model is not None:  # only the tags changed: the vector holds
                self.set_vectors(self.vector_model, [memory.id], vector[None, :])
            return
        self._current = None
        for name, value in self._row(memory, int(self.cols["doc_len"].a[doc])).items():
            self.cols[name].a[doc] = value
        self._set_extras(memory)

    def predecessors(self, memory_ids: Iterable[str]) -> list[str]:
        """The live memories superseded by any of ``memory_ids``."""
        if self._replaced is None:
            self._replaced = {}
            for mid, extra in self.extras.items():
                if (successor := extra.get("superseded_by")) is not None:
                    self._replaced.setdefault(successor, set()).add(mid)
        return sorted({p for i in memory_ids for p in self._replaced.get(i, ()) if p in self.doc_of})

    def set_usage(self, memory: Memory) -> None:
        """Record a touch (the memory as the store now has it)."""
        doc = self.doc_of.get(memory.id)
        if doc is not None:
            self.cols["usage"].a[doc] = memory.usage_count
            self.cols["last_used"].a[doc] = to_micros(memory.last_used_at)

    def record(self, memory_id: str) -> dict[str, Any] | None:
        """The indexed fields of a live memory (everything but content and agent), or None."""
        doc = self.doc_of.get(memory_id)
        if doc is None:
            return None
        c = self.cols
        created = int(c["created"].a[doc])
        valid_from = int(c["valid_from"].a[doc])
        extra = self.extras.get(memory_id, {})
        return {
            "id": memory_id,
            "type": _TYPES[c["type_code"].a[doc]],
            "project": self.projects[c["project"].a[doc]],
            "confidence": float(c["confidence"].a[doc]),
            "usage_count": int(c["usage"].a[doc]),
            "used_count": int(c["used"].a[doc]),
            "created_at": from_micros(created),
            "last_used_at": from_micros(c["last_used"].a[doc]),
            "source": SOURCES[c["source"].a[doc]],
            "expires_at": _time_or_none(c["expires"].a[doc]),
            "valid_from": from_micros(valid_from),
            "valid_until": _time_or_none(c["valid_until"].a[doc]),
            "version": int(c["version"].a[doc]),
            "updated_at": from_micros(c["updated"].a[doc]),
            "validated_at": _time_or_none(c["validated"].a[doc]),
            "tags": tuple(extra.get("tags", ())),
            "metadata": extra.get("metadata"),
            "superseded_by": extra.get("superseded_by"),
            "superseded_reason": extra.get("superseded_reason"),
            "author": extra.get("author"),
        }

    def _project_code(self, project: str) -> int:
        code = self.project_code.get(project)
        if code is None:
            code = len(self.projects)
            self.projects.append(project)
            self.project_code[project] = code
        return code

    def merge(self) -> None:
        """Fold the deltas into the CSR bases, dropping forgotten memories and renumbering documents."""
        self._lengths = None
        self._current = None
        alive = self.alive.view.copy()
        new_doc = np.cumsum(alive, dtype=np.int64) - 1
        self.raw.merge(alive, new_doc)
        self.terms.merge(alive, new_doc)
        self.tag_lists.merge(alive, new_doc)
        if not alive.all():
            keep_docs = np.flatnonzero(alive)
            self.ids = [self.ids[i] for i in keep_docs]
            self.doc_of = {mid: i for i, mid in enumerate(self.ids)}
            self.cols = {name: Vec(vec.a.dtype, vec.view[keep_docs]) for name, vec in self.cols.items()}
            self.alive = Vec(np.bool_, np.ones(len(keep_docs), dtype=bool))
            self.has_vector = Vec(np.bool_, self.has_vector.view[keep_docs])
            if self.vectors is not None:
                self.vectors = Rows(self.vectors.dim, self.vectors.view[keep_docs])

    # -- reads -----------------------------------------------------------------------------------

    def _token_hits(self, token: str, matched: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Sorted distinct documents containing ``token`` and its occurrences in each (dead ones included);
        ``matched``: the terms containing it, when known."""
        wids, mult = matched if matched is not None else self.raw.containing(token)
        if len(wids) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        docs, weights = self.raw.lookup(wids, mult)
        if len(wids) == 1:  # one term's postings: already distinct and in document order
            return docs, weights.astype(np.float64)
        n = len(self.ids)
        if len(docs) * 8 > n:  # dense: one pass over all documents beats sorting many postings
            occ = np.bincount(docs, weights=weights, minlength=n)
            hit = np.flatnonzero(occ > 0)  # on a bool mask: ~7x faster than on the float vector
            return hit, occ[hit]
        hit, inverse = np.unique(docs, return_inverse=True)
        return hit, np.bincount(inverse, weights=weights)

    def keep(self, docs: np.ndarray, filters: Filters) -> np.ndarray:
        """Which of ``docs`` are alive and pass ``filters`` (a mask aligned with ``docs``): fields, tags, and
        time (current at ``filters.now`` unless widened; or as of ``filters.as_of``)."""
        keep = self.alive.view[docs]
        if filters.types is not None:
            keep &= np.isin(self.col("type_code")[docs], [TYPE_CODES[t] for t in filters.types])
        if filters.projects is not None:
            codes = [self.project_code[p] for p in filters.projects if p in self.project_code]
            keep &= np.isin(self.col("project")[docs], codes)
        if filters.sources is not None:
            keep &= np.isin(self.col("source")[docs], [SOURCE_CODES[s] for s in filters.sources])
        if filters.tags:
            for tag in filters.tags:
                tid = self.tag_lists.term_id.get(tag)
                if tid is None:
                    return np.zeros(len(docs), dtype=bool)
                tagged, _ = self.tag_lists.lookup(np.array([tid]))
                keep &= np.isin(docs, tagged)
        if filters.as_of is not None:
            moment = to_micros(filters.as_of)
            keep &= (self.col("created")[docs] <= moment) & (self.col("valid_from")[docs] <= moment)
            keep &= (self.col("valid_until")[docs] > moment) & (self.col("expires")[docs] > moment)
        elif filters.now is None:
            if not filters.include_superseded:
                keep &= self.col("valid_until")[docs] == NEVER
        elif not filters.include_superseded and not filters.include_expired:
            keep &= self.current_mask(to_micros(filters.now))[docs]
        else:
            now = to_micros(filters.now)
            keep &= self._valid_since(self.col("valid_from")[docs], self.col("created")[docs], now)
            if not filters.include_superseded:
                keep &= self.col("valid_until")[docs] > now
            if not filters.include_expired:
                keep &= self.col("expires")[docs] > now
        kept: np.ndarray = keep
        return kept

    @staticmethod
    def _valid_since(valid_from: np.ndarray, created: np.ndarray, now: int) -> np.ndarray:
        """Valid by ``now``: a memory given a future valid_from is not current before it; without a
        valid_from of its own (it equals created_at) a memory is current once stored, whatever created_at an
        import gave it."""
        mask: np.ndarray = (valid_from <= now) | (valid_from == created)
        return mask

    def current_mask(self, now: int) -> np.ndarray:
        """Per document: current at ``now`` (microseconds): valid (valid_from <= now < valid_until) and not
        expired. Cached until the next write or the next moment a memory's state changes."""
        cached = self._current
        if cached is not None and cached[0] <= now < cached[1] and len(cached[2]) == len(self.ids):
            return cached[2]
        valid_from, created = self.col("valid_from"), self.col("created")
        until, expires = self.col("valid_until"), self.col("expires")
        mask = self._valid_since(valid_from, created, now) & (until > now) & (expires > now)
        boundaries = [b[b > now] for b in (valid_from[valid_from != created], until, expires)]
        upcoming = [int(b.min()) for b in boundaries if len(b)]
        self._current = (now, min(upcoming) if upcoming else NEVER, mask)
        return mask

    def _rank(self, docs: np.ndarray, primary: list[np.ndarray], limit: int) -> np.ndarray:
        """Positions in ``docs`` of the best ``limit``: by the ``primary`` keys (aligned with ``docs``), then
        usage, last use, creation and document number, all descending."""
        keys = [*primary, self.col("usage")[docs], self.col("last_used")[docs], self.col("created")[docs], docs]
        return _top_k(keys, limit)

    def search_all(self, tokens: Sequence[str], filters: Filters, limit: int) -> list[tuple[str, float]]:
        """AND-token recall: (id, total token occurrences) of the memories containing every token, best
        first (docs/architecture.md, "Recall, start and end"); without tokens, every memory passing the filters."""
        if not tokens:
            every = np.arange(len(self.ids))
            every = every[self.keep(every, filters)]
            return [(self.ids[every[i]], 0.0) for i in self._rank(every, [], limit)]
        # rarest token first; a token far more frequent than the candidates left is checked on them alone
        matched = [self.raw.containing(token) for token in tokens]
        sizes = [sum(self.raw.df(t) for t in tids.tolist()) for tids, _ in matched]
        docs: np.ndarray | None = None
        occ: np.ndarray | None = None
        for k in sorted(range(len(tokens)), key=sizes.__getitem__):
            if docs is None or occ is None:
                docs, occ = self._token_hits(tokens[k], matched[k])
                keep = self.keep(docs, filters)
                docs, occ = docs[keep], occ[keep]
            elif sizes[k] > 4 * len(docs):
                counts = self.raw.counts_in(*matched[k], docs)
                found = counts > 0
                docs, occ = docs[found], occ[found] + counts[found]
            else:
                hit, count = self._token_hits(tokens[k], matched[k])
                # both sorted and distinct: a binary search of one in the other beats intersect1d's sort
                at = np.minimum(np.searchsorted(hit, docs), max(len(hit) - 1, 0))
                both = hit[at] == docs if len(hit) else np.zeros(len(docs), dtype=bool)
                docs, occ = docs[both], occ[both] + count[at[both]]
            if len(docs) == 0:
                return []
        assert docs is not None and occ is not None
        return [(self.ids[docs[i]], float(occ[i])) for i in self._rank(docs, [occ], limit)]

    def newest(self, filters: Filters, before: tuple[int, str] | None, limit: int) -> list[tuple[int, str]]:
        """(creation in microseconds, id) of the ``limit`` newest live memories passing ``filters``, newest
        first (ties by id, descending), and only those before ``before`` in that order (a listing's cursor)."""
        docs = np.flatnonzero(self.alive.view)
        docs = docs[self.keep(docs, filters)]
        created = self.col("created")[docs]
        if before is not None:
            at, after_id = before
            older = created < at
            for position in np.flatnonzero(created == at):  # same moment: the id decides
                older[position] = self.ids[docs[position]] < after_id
            docs, created = docs[older], created[older]
        if len(docs) > limit:
            kth = np.partition(created, len(created) - limit)[len(created) - limit]
            chosen = created >= kth
            docs, created = docs[chosen], created[chosen]
        return sorted(((int(c), self.ids[d]) for c, d in zip(created, docs)), reverse=True)[:limit]

    def term_stats(self, terms: Sequence[str]) -> tuple[int, float, int, dict[str, int]]:
        """What BM25 needs to score across several indexes as one collection: documents (dead ones included,
        as in :meth:`bm25_scores`), the total analysed length and the number of the live ones, and each term's
        document frequency."""
        df = {}
        for term in dict.fromkeys(terms):
            tid = self.terms.term_id.get(term)
            if tid is not None:
                df[term] = self.terms.df(tid)
        total, live = self.length_totals()
        return len(self.ids), total, live, df

    def length_totals(self) -> tuple[float, int]:
        """The analysed length of the live documents, summed, and their number (cached between writes)."""
        if self._lengths is None:
            self._lengths = (float(self.col("doc_len")[self.alive.view].sum()), len(self.doc_of))
        return self._lengths

    def bm25_scores(self, terms: Sequence[str], *, k1: float = 1.2, b: float = 0.4,
                    stats: tuple[int, float, dict[str, int]] | None = None) -> np.ndarray:
        """Okapi BM25 of every document for ``terms`` (0 for documents matching none, dead ones included).

        ``b`` is 0.4 rather than the textbook 0.75: memories are short and of similar length, and weaker
        length normalisation measured better on both LoCoMo and LongMemEval (docs/retrieval.md).

        Document frequencies count postings of forgotten memories until the next merge (as Lucene does
        with deletions); scores are otherwise exact.
        """
        # N counts forgotten documents too, like their postings in df (Lucene's maxDoc), so idf stays positive
        scores = np.zeros(len(self.ids), dtype=np.float64)
        unique = list(dict.fromkeys(terms))
        tids = self.terms.ids_of(unique)
        if len(self.doc_of) == 0 or len(tids) == 0:
            return scores
        lengths = self.col("doc_len")
        if stats is None:  # this index alone is the collection
            total, live = self.length_totals()
            n_docs, avgdl, global_df = len(self.ids), max(total / max(live, 1), 1e-9), None
        else:  # several indexes scored as one collection (an agent's own, its teams', the swarm)
            n_docs, avgdl, global_df = stats[0], max(stats[1], 1e-9), stats[2]
        for term in unique:
            tid = self.terms.term_id.get(term)
            if tid is None:
                continue
            docs, tf = self.terms.lookup(np.array([tid]))
            df = len(docs) if global_df is None else global_df.get(term, len(docs))
            idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = k1 * (1.0 - b + b * lengths[docs] / avgdl)
            scores[docs] += idf * tf * (k1 + 1.0) / (tf + norm)
        return scores

    def top(self, scores: np.ndarray, filters: Filters, limit: int,
            eligible: np.ndarray | None = None) -> list[tuple[str, float]]:
        """(id, score) of the best ``limit`` live documents passing the filters, by ``scores`` (one per
        document) then usage and recency. Only documents with a positive score count, or, when
        ``eligible`` (a mask over documents) is given, exactly those it selects."""
        docs = np.flatnonzero(eligible if eligible is not None else scores > 0)
        docs = docs[self.keep(docs, filters)]
        return [(self.ids[docs[i]], float(scores[docs[i]])) for i in self._rank(docs, [scores[docs]], limit)]

    # -- vectors ---------------------------------------------------------------------------------

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

    def columns(self, memory_ids: Sequence[str], names: Sequence[str]) -> dict[str, np.ndarray]:
        """The values of the named columns for these (live) memories, in order."""
        docs = np.fromiter((self.doc_of[i] for i in memory_ids), dtype=np.int64, count=len(memory_ids))
        return {name: self.cols[name].view[docs] for name in names}

    def select(self, mask: np.ndarray) -> list[str]:
        """Ids of the live documents where ``mask`` holds."""
        return [self.ids[i] for i in np.flatnonzero(mask & self.alive.view)]

    def type_counts(self) -> dict[MemoryType, int]:
        """How many live memories of each type."""
        counts = np.bincount(self.col("type_code")[self.alive.view], minlength=len(TYPE_CODES))
        return {t: int(counts[code]) for t, code in TYPE_CODES.items()}

    # -- persistence -----------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write a snapshot (merging first) atomically: a temporary file renamed over ``path``."""
        self.merge()
        arrays: dict[str, np.ndarray] = {
            "version": np.array([FORMAT_VERSION]),
            "unicode": np.frombuffer(unicodedata.unidata_version.encode(), dtype=np.uint8),
            "foreign": np.array([self.foreign]),
            "seq": np.array([self.seq], dtype=np.int64),
            "token": _text_array([self.token]),
            "ids": _text_array(self.ids),
            "projects": _text_array(self.projects),
            **{f"col_{name}": vec.view for name, vec in self.cols.items()},
            **self.raw.arrays("raw_"), **self.terms.arrays("terms_"), **self.tag_lists.arrays("tags_"),
            "extras": np.frombuffer(json.dumps(self.extras, ensure_ascii=False).encode("utf-8", "surrogatepass"),
                                    dtype=np.uint8),
            **self._vector_arrays(),
        }
        with atomic_writer(path) as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub reads ** as allow_pickle

    def _vector_arrays(self) -> dict[str, np.ndarray]:
        if self.vectors is None or self.vector_model is None:
            return {}
        return {"vector_model": _text_array([self.vector_model]), "vectors": self.vectors.view,
                "has_vector": self.has_vector.view}

    def carried_vectors(self) -> "CarriedVectors | None":
        """This index's vectors with the content digest of each memory, to keep across a rebuild."""
        if self.vectors is None or self.vector_model is None:
            return None
        docs = np.flatnonzero(self.has_vector.view & self.alive.view)
        return CarriedVectors(self.vector_model, [self.ids[d] for d in docs],
                              self.col("content_hash")[docs].copy(), self.vectors.view[docs].copy())

    @staticmethod
    def read_vectors(path: Path) -> "CarriedVectors | None":
        """The vectors of a snapshot of any format version that holds them with the content digests (an index
        of an older Cortex is rebuilt, but its vectors, costly to compute, are kept); None when there are none."""
        try:
            with np.load(io.BytesIO(read_regular(path)), allow_pickle=False) as data:
                if "vectors" not in data.files or "col_content_hash" not in data.files:
                    return None
                ids, digests = _strings(data["ids"]), data["col_content_hash"]
                vectors, has = data["vectors"], data["has_vector"].astype(bool)
                model = _strings(data["vector_model"])[0]
        except Exception:  # noqa: BLE001 - an unreadable file has nothing to carry
            return None
        if not (len(ids) == len(digests) == len(vectors) == len(has)) or not np.isfinite(vectors).all():
            return None
        docs = np.flatnonzero(has)
        return CarriedVectors(model, [ids[d] for d in docs], digests[docs], vectors[docs])

    @classmethod
    def load(cls, path: Path) -> "MemoryIndex | None":
        """Read a snapshot; None when it is missing, unreadable, damaged (every member is checked against its
        CRC and the arrays against each other) or of another format version."""
        try:
            with np.load(io.BytesIO(read_regular(path)), allow_pickle=False) as data:
                if int(data["version"][0]) != FORMAT_VERSION:
                    return None
                # normalisation depends on the Unicode tables: another version may split words differently
                if data["unicode"].tobytes().decode() != unicodedata.unidata_version:
                    return None
                arrays = {k: data[k] for k in data.files}
            index = cls._from_arrays(arrays)
        except Exception:  # noqa: BLE001 - whatever is wrong with a derived file, the answer is a rebuild
            return None
        return index if index is not None and index._consistent() else None

    @classmethod
    def _from_arrays(cls, arrays: dict[str, np.ndarray]) -> "MemoryIndex | None":
        index = cls()
        index.foreign = int(arrays["foreign"][0])
        index.seq = int(arrays["seq"][0])
        index.token = (_strings(arrays["token"]) or [""])[0]
        index.ids = _strings(arrays["ids"])
        index.projects = _strings(arrays["projects"])
        index.project_code = {p: i for i, p in enumerate(index.projects)}
        n = len(index.ids)
        for name, dtype in COLUMNS.items():
            column = arrays.get(f"col_{name}")
            if column is None or len(column) != n:
                return None
            index.cols[name] = Vec(dtype, column)
        index.alive = Vec(np.bool_, np.ones(n, dtype=bool))
        index.has_vector = Vec(np.bool_, np.zeros(n, dtype=bool))
        if "vectors" in arrays:
            if len(arrays["vectors"]) != n or len(arrays["has_vector"]) != n:
                return None
            index.vector_model = _strings(arrays["vector_model"])[0]
            index.vectors = Rows(arrays["vectors"].shape[1], arrays["vectors"])
            index.has_vector = Vec(np.bool_, arrays["has_vector"])
        index.doc_of = {mid: i for i, mid in enumerate(index.ids)}
        raw = PostingLists.from_arrays(arrays, "raw_")
        terms = PostingLists.from_arrays(arrays, "terms_")
        tags = PostingLists.from_arrays(arrays, "tags_")
        if raw is None or terms is None or tags is None:
            return None
        index.raw, index.terms, index.tag_lists = raw, terms, tags
        extras = json.loads(arrays["extras"].tobytes().decode("utf-8"))
        if not isinstance(extras, dict) or not set(extras) <= set(index.doc_of):
            return None
        index.extras = extras
        index._replaced = None
        return index

    def _consistent(self) -> bool:
        """Whether the arrays of a loaded snapshot fit together (a damaged file that still parses does not)."""
        n = len(self.ids)
        if len(self.doc_of) != n or self.seq < 0 or self.foreign < 0:
            return False
        if n and (int(self.col("type_code").min()) < 0 or int(self.col("type_code").max()) >= len(TYPE_CODES)):
            return False
        if n and (int(self.col("project").min()) < 0 or int(self.col("project").max()) >= len(self.projects)):
            return False
        for lists in (self.raw, self.terms, self.tag_lists):
            if not lists.consistent(n):
                return False
        return self.vectors is None or bool(np.isfinite(self.vectors.view).all())


def _text_array(items: Sequence[str]) -> np.ndarray:
    return np.frombuffer("\n".join(items).encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _strings(array: np.ndarray) -> list[str]:
    text = array.tobytes().decode("utf-8", "surrogatepass")
    return text.split("\n") if text else []


def _top_k(keys: list[np.ndarray], k: int) -> np.ndarray:
    """Positions of the ``k`` rows that sort first by ``keys`` (aligned arrays, each descending, the first
    most significant, the last unique).

    Avoids sorting every row: partition on the first key, keep the rows strictly above the k-th value, and
    resolve the ties at that value with the remaining keys.
    """
    rows = np.arange(len(keys[0]))
    return _top_k_rows(keys, rows, 0, k)


def _top_k_rows(keys: list[np.ndarray], rows: np.ndarray, level: int, k: int) -> np.ndarray:
    if len(rows) <= k or level == len(keys) - 1:
        order = np.lexsort([-key[rows] for key in reversed(keys)])
        return rows[order[:k]]
    vals = keys[level][rows]
    kth = np.partition(vals, len(vals) - k)[len(vals) - k]
    above = rows[vals > kth]
    tied = rows[vals == kth]
    chosen = np.concatenate([above, _top_k_rows(keys, tied, level + 1, k - len(above))])
    order = np.lexsort([-key[chosen] for key in reversed(keys)])
    return chosen[order]
