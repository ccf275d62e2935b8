"""Posting lists over a growing vocabulary: a compressed (CSR) base plus a per-term delta.

Used twice per agent: over the whitespace words of the content (AND-token recall, substring matching over
the vocabulary) and over analysed terms (BM25). Documents are small integers owned by the caller, who also
decides when forgotten documents are dropped (:meth:`merge` with a renumbering).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

_TAIL_REBUILD = 2048
_CACHED_TOKENS = 4096  # substring matches kept per posting list (a few MB at most)


class Vec:
    """A growable numpy vector (amortised O(1) append, zero-copy view)."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: Any, data: Any = None) -> None:
        data = np.asarray(data if data is not None else [], dtype=dtype)
        self.a = np.empty(max(64, len(data)), dtype=dtype)
        self.a[: len(data)] = data
        self.n = len(data)

    def append(self, value: Any) -> None:
        if self.n == len(self.a):
            grown = np.empty(max(64, len(self.a) * 2), dtype=self.a.dtype)
            grown[: self.n] = self.a[: self.n]
            self.a = grown
        self.a[self.n] = value
        self.n += 1

    def extend(self, values: Sequence[Any]) -> None:
        """Append every value of ``values`` (one copy, however many)."""
        need = self.n + len(values)
        if need > len(self.a):
            grown = np.empty(max(need, len(self.a) * 2), dtype=self.a.dtype)
            grown[: self.n] = self.a[: self.n]
            self.a = grown
        self.a[self.n : need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.a[: self.n]

    @classmethod
    def wrap(cls, array: np.ndarray) -> "Vec":
        """A vector over ``array`` itself (no copy until it grows): for arrays nothing else holds."""
        vec = cls.__new__(cls)
        vec.a, vec.n = array, len(array)
        return vec


class PostingLists:
    """term -> [(doc, tf)], with exact and substring term lookup."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self._term_id: dict[str, int] | None = {}  # built on first use after a load (recall never needs it)
        self.has_delta = Vec(np.bool_)
        self.base_terms = 0
        self.base_off = np.zeros(1, dtype=np.int64)
        self.base_docs = np.zeros(0, dtype=np.int32)
        self.base_tf = np.zeros(0, dtype=np.int32)
        # term id -> [doc, tf, doc, tf, ...] as C ints: a million memories leave millions of postings here
        # between merges, which Python int objects would make ~6x larger
        self.delta: dict[int, array[int]] = {}
        self._delta_arrays: dict[int, np.ndarray] = {}  # a read's copy of a delta list (valid while as long)
        self.delta_postings = 0
        # substring search: terms [0, blob_terms) as UTF-8 joined by newlines, where each term starts, and
        # the positions of every byte pair (sorted by pair; pair_off: CSR offsets over the 65536 pairs)
        self.blob = np.zeros(0, dtype=np.uint8)
        self.blob_terms = 0
        self.blob_starts = np.zeros(0, dtype=np.int64)
        self.pair_positions = np.zeros(0, dtype=np.int64)
        self.pair_off = np.zeros(65537, dtype=np.int64)
        self._blob_stale = False
        # token -> (vocabulary size it was computed for, term ids, multiplicities): the vocabulary only grows
        # (terms keep their ids), so a cached answer is extended by scanning the newer terms alone
        self._matches: OrderedDict[str, tuple[int, np.ndarray, np.ndarray]] = OrderedDict()

    @property
    def term_id(self) -> dict[str, int]:
        """term -> its id."""
        if self._term_id is None:
            self._term_id = {t: i for i, t in enumerate(self.terms)}
        return self._term_id

    @property
    def postings(self) -> int:
        """How many postings (live or not) the lists hold."""
        return len(self.base_docs) + self.delta_postings

    def add(self, doc: int, counts: Mapping[str, int]) -> None:
        """Record that ``doc`` contains each term ``counts[term]`` times."""
        # the hot path of every write: keep per-term work to two dict lookups and a list extend
        term_id, delta = self.term_id, self.delta
        for term, tf in counts.items():
            tid = term_id.get(term)
            if tid is None:
                tid = len(self.terms)
                self.terms.append(term)
                term_id[term] = tid
                self.has_delta.append(False)
            postings = delta.get(tid)
            if postings is None:
                delta[tid] = array("i", (doc, tf))
                self.has_delta.a[tid] = True
            else:
                postings.extend((doc, tf))
        self.delta_postings += len(counts)

    def add_many(self, first: int, counts: Sequence[Mapping[str, int]]) -> None:
        """:meth:`add` for documents ``first``, ``first + 1``, ... (``counts[i]`` for ``first + i``): the
        batch's postings grouped by term with numpy, then appended to each term's delta at once."""
        term_id, terms = self.term_id, self.terms
        words = [term for doc_counts in counts for term in doc_counts]
        if not words:
            return
        for term in dict.fromkeys(words):  # new terms numbered in order of first occurrence, as add() does
            if term not in term_id:
                term_id[term] = len(terms)
                terms.append(term)
                self.has_delta.append(False)
        tids = np.fromiter(map(term_id.__getitem__, words), dtype=np.int64, count=len(words))
        lens = np.fromiter(map(len, counts), dtype=np.int64, count=len(counts))
        pairs = np.empty(2 * len(words), dtype=np.intc)
        order = np.argsort(tids, kind="stable")  # by term, each term's documents ascending
        pairs[0::2] = np.repeat(np.arange(first, first + len(counts), dtype=np.intc), lens)[order]
        pairs[1::2] = np.fromiter((tf for doc_counts in counts for tf in doc_counts.values()), dtype=np.intc,
                                  count=len(words))[order]
        tids = tids[order]
        cuts = np.flatnonzero(np.diff(tids)) + 1
        starts = np.concatenate([[0], cuts]).tolist()
        ends = np.concatenate([cuts, [len(tids)]]).tolist()
        delta, has_delta, data = self.delta, self.has_delta.a, memoryview(pairs.tobytes())
        width = 2 * pairs.itemsize  # bytes of one (doc, tf) pair
        for tid, start, end in zip(tids[starts].tolist(), starts, ends):
            chunk = data[width * start:width * end]
            pending = delta.get(tid)
            if pending is None:
                delta[tid] = pending = array("i")
                has_delta[tid] = True
            pending.frombytes(chunk)
        self.delta_postings += len(words)

    def needs_merge(self) -> bool:
        return self.delta_postings > max(200_000, len(self.base_docs) // 2)

    def merge(self, alive: np.ndarray, new_doc: np.ndarray) -> None:
        """Fold the delta into the base, dropping postings of dead documents and renumbering the rest
        (``new_doc[old]`` is the new number of a live document, increasing with ``old``)."""
        # int32 throughout (documents and terms are counted in int32 already): at a million memories the
        # postings are tens of millions, and this runs while a bulk load holds everything else in memory
        terms = np.repeat(np.arange(self.base_terms, dtype=np.int32), np.diff(self.base_off))
        docs, tfs = self.base_docs, self.base_tf
        if self.delta:
            keys = sorted(self.delta)
            delta = [self.delta[k] for k in keys]
            lens = np.fromiter((len(p) // 2 for p in delta), dtype=np.int64, count=len(keys))
            pairs = np.concatenate([np.frombuffer(p, dtype=np.intc) for p in delta]).astype(np.int32, copy=False)
            terms = np.concatenate([terms, np.repeat(np.array(keys, dtype=np.int32), lens)])
            docs = np.concatenate([docs, pairs[0::2]])
            tfs = np.concatenate([tfs, pairs[1::2]])
            del pairs
        if len(docs) and not alive[docs].all():
            keep = alive[docs]
            terms, docs, tfs = terms[keep], new_doc[docs[keep]].astype(np.int32), tfs[keep]
        elif len(docs):
            docs = new_doc[docs].astype(np.int32)
        # Each term's base postings precede its delta ones and both ascend by document (documents are numbered
        # in the order they are added, and renumbering keeps the order): a stable sort by term alone orders
        # the postings by (term, document). Checked, with the general sort as the fallback.
        order = np.argsort(terms, kind="stable")
        terms, docs, tfs = terms[order], docs[order], tfs[order]
        del order
        if len(docs) > 1 and not ((np.diff(docs) > 0) | (np.diff(terms) != 0)).all():
            order = np.lexsort((docs, terms))
            terms, docs, tfs = terms[order], docs[order], tfs[order]
        n = len(self.terms)
        self.base_off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n), out=self.base_off[1:])
        self.base_docs = docs.astype(np.int32, copy=False)
        self.base_tf = tfs.astype(np.int32, copy=False)
        self.base_terms = n
        self.delta = {}
        self._delta_arrays = {}
        self.delta_postings = 0
        self.has_delta = Vec(np.bool_, np.zeros(n, dtype=bool))

    def _refresh_blob(self) -> None:
        """Join the terms as UTF-8 (newline-separated) and sort the positions of every byte pair, so a
        substring search starts from the token's rarest pair instead of scanning the whole vocabulary."""
        encoded = [w.encode("utf-8", "surrogatepass") for w in self.terms]
        data = b"\n".join(encoded) + b"\n"
        self.blob = np.frombuffer(data, dtype=np.uint8)
        lengths = np.fromiter((len(w) + 1 for w in encoded), dtype=np.int64, count=len(encoded))
        self.blob_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else lengths
        pairs = self.blob[:-1].astype(np.int32) * 256 + self.blob[1:] if len(self.blob) > 1 \
            else np.zeros(0, dtype=np.int32)
        self.pair_positions = np.argsort(pairs, kind="stable").astype(np.int64)
        self.pair_off = np.zeros(65537, dtype=np.int64)
        np.cumsum(np.bincount(pairs, minlength=65536), out=self.pair_off[1:])
        self.blob_terms = len(self.terms)
        self._blob_stale = False

    def _positions(self, needle: bytes) -> np.ndarray:
        """Sorted start positions of ``needle`` (no newline in it) in the joined vocabulary."""
        blob = self.blob
        if len(needle) == 1:
            return np.flatnonzero(blob == needle[0])
        codes = [needle[i] * 256 + needle[i + 1] for i in range(len(needle) - 1)]
        counts = [int(self.pair_off[c + 1] - self.pair_off[c]) for c in codes]
        anchor = min(range(len(codes)), key=counts.__getitem__)
        code = codes[anchor]
        starts = self.pair_positions[self.pair_off[code]:self.pair_off[code + 1]] - anchor
        starts = starts[(starts >= 0) & (starts + len(needle) <= len(blob))]
        for k, byte in enumerate(needle):
            if len(starts) == 0:
                break
            if k not in (anchor, anchor + 1):
                starts = starts[blob[starts + k] == byte]
        return np.sort(starts)

    def containing(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """Term ids containing ``token`` and how many times each contains it (non-overlapping, as
        ``str.count``). Terms must not contain newlines. Recent tokens' answers are cached (agents repeat
        their words: the scan of the whole vocabulary is the costly part of a recall)."""
        cached = self._matches.get(token)
        n = len(self.terms)
        if cached is not None:
            seen, tids, mult = cached
            if seen < n:
                tids, mult = self._with_tail(token, tids, mult, seen)
                self._matches[token] = (n, tids, mult)
            self._matches.move_to_end(token)
            return tids, mult
        tids, mult = self._scan(token)
        self._matches[token] = (n, tids, mult)
        if len(self._matches) > _CACHED_TOKENS:
            self._matches.popitem(last=False)
        return tids, mult

    def _scan(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`containing`, computed: a search of the joined vocabulary (and a scan of its tail)."""
        if self._blob_stale or len(self.terms) - self.blob_terms > _TAIL_REBUILD:
            self._refresh_blob()
        tids = mult = np.zeros(0, dtype=np.int64)
        needle = token.encode("utf-8", "surrogatepass")
        if needle and self.blob_terms:
            positions = self._positions(needle)
            if len(positions):
                owners = np.searchsorted(self.blob_starts, positions, side="right") - 1  # sorted
                first = np.flatnonzero(np.diff(owners, prepend=-1))
                tids, mult = owners[first], np.diff(np.append(first, len(owners)))
                if len(needle) > 1 and (mult > 1).any():  # overlapping matches count once, as str.count does
                    mult = np.array([self.terms[t].count(token) if m > 1 else 1 for t, m in zip(tids, mult)],
                                    dtype=np.int64)
        return self._with_tail(token, tids, mult, self.blob_terms)

    def _with_tail(self, token: str, tids: np.ndarray, mult: np.ndarray, start: int
                   ) -> tuple[np.ndarray, np.ndarray]:
        """``tids``/``mult`` extended by the terms from ``start`` on that contain ``token`` (counted as
        ``str.count``), scanned one by one: the few terms added since the search structure was built."""
        tail = [(i, c) for i in range(start, len(self.terms)) if (c := self.terms[i].count(token))]
        if not tail:
            return tids, mult
        return (np.concatenate([tids, np.array([i for i, _ in tail], dtype=np.int64)]),
                np.concatenate([mult, np.array([c for _, c in tail], dtype=np.int64)]))

    def lookup(self, tids: np.ndarray, mult: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Documents (with repeats) and tf (times ``mult`` per term) for the union of the given terms."""
        if mult is None:
            mult = np.ones(len(tids), dtype=np.int64)
        if len(tids) == 1 and tids[0] < self.base_terms and not self.has_delta.view[tids[0]]:
            start, end = self.base_off[tids[0]], self.base_off[tids[0] + 1]  # one term: its slice, as it is
            return self.base_docs[start:end].astype(np.int64), self.base_tf[start:end] * mult[0]
        base = tids < self.base_terms
        bt, bm = tids[base], mult[base]
        starts = self.base_off[bt]
        lens = self.base_off[bt + 1] - starts
        total = int(lens.sum())
        docs_parts: list[np.ndarray] = []
        weight_parts: list[np.ndarray] = []
        if total:
            idx = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)
            docs_parts.append(self.base_docs[idx].astype(np.int64))
            weight_parts.append(self.base_tf[idx] * np.repeat(bm, lens))
        if self.delta and len(tids):
            for j in np.flatnonzero(self.has_delta.view[tids]):
                pairs = self._pending(int(tids[j]))
                docs_parts.append(pairs[0::2])
                weight_parts.append(pairs[1::2] * mult[j])
        if not docs_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(docs_parts), np.concatenate(weight_parts)

    def counts_in(self, tids: np.ndarray, mult: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """For sorted distinct ``docs``: the sum over the terms ``tids`` of each one's tf times ``mult`` (0 where
        none occurs). Binary searches in the terms' postings (each sorted by document), so the cost follows
        ``len(docs)``, not the length of the postings: the cheap way to check a few candidates against a
        frequent term."""
        total = np.zeros(len(docs), dtype=np.float64)
        for tid, m in zip(tids.tolist(), mult.tolist()):
            slices: list[tuple[np.ndarray, np.ndarray]] = []
            if tid < self.base_terms:
                start, end = int(self.base_off[tid]), int(self.base_off[tid + 1])
                slices.append((self.base_docs[start:end], self.base_tf[start:end]))
            if tid in self.delta:
                pairs = self._pending(tid)
                slices.append((pairs[0::2], pairs[1::2]))
            for posting_docs, tfs in slices:
                if len(posting_docs) == 0:
                    continue
                at = np.searchsorted(posting_docs, docs)
                inside = at < len(posting_docs)
                hit = np.zeros(len(docs), dtype=bool)
                hit[inside] = posting_docs[at[inside]] == docs[inside]
                total[hit] += tfs[at[hit]] * m
        return total

    def _pending(self, tid: int) -> np.ndarray:
        """Term ``tid``'s delta postings as an array [doc, tf, doc, tf, ...] (kept until the list grows: the
        lists of frequent terms are long, and reads would otherwise convert them every time)."""
        pending = self.delta[tid]
        cached = self._delta_arrays.get(tid)
        if cached is None or len(cached) != len(pending):
            cached = self._delta_arrays[tid] = np.frombuffer(pending, dtype=np.intc).astype(np.int64)
        return cached

    def df(self, tid: int) -> int:
        """How many postings (documents, forgotten ones until the next merge) term ``tid`` has."""
        count = int(self.base_off[tid + 1] - self.base_off[tid]) if tid < self.base_terms else 0
        return count + len(self.delta.get(tid, ())) // 2

    def df_total(self, tids: np.ndarray) -> int:
        """:meth:`df` summed over the terms ``tids``."""
        base = tids[tids < self.base_terms]
        total = int((self.base_off[base + 1] - self.base_off[base]).sum()) if len(base) else 0
        if self.delta and len(tids):
            total += sum(len(self.delta.get(int(t), ())) // 2 for t in tids[self.has_delta.view[tids]])
        return total

    def ids_of(self, terms: list[str]) -> np.ndarray:
        """Ids of the terms present in the vocabulary (exact match)."""
        return np.array([t for t in (self.term_id.get(x) for x in terms) if t is not None], dtype=np.int64)

    # -- persistence -----------------------------------------------------------------------------

    def consistent(self, n_docs: int) -> bool:
        """Whether the base arrays describe valid postings of ``n_docs`` documents."""
        off = self.base_off
        if len(off) != self.base_terms + 1 or (len(off) and int(off[0]) != 0):
            return False
        if len(off) > 1 and bool((np.diff(off) < 0).any()):
            return False
        if len(self.base_docs) != len(self.base_tf) or len(self.base_docs) != int(off[-1]):
            return False
        if len(self.base_docs) and (int(self.base_docs.min()) < 0 or int(self.base_docs.max()) >= n_docs):
            return False
        return not (len(self.base_tf) and int(self.base_tf.min()) < 1)

    def arrays(self, prefix: str, searchable: bool = False) -> dict[str, np.ndarray]:
        """The snapshot arrays (call after :meth:`merge`); ``searchable``: with the substring search structure,
        so a loaded index answers its first recall without building it."""
        out: dict[str, np.ndarray] = {
            f"{prefix}terms": np.frombuffer("\n".join(self.terms).encode("utf-8", "surrogatepass"), dtype=np.uint8),
            f"{prefix}off": self.base_off, f"{prefix}docs": self.base_docs, f"{prefix}tf": self.base_tf,
        }
        if searchable:
            if self._blob_stale or self.blob_terms != len(self.terms):
                self._refresh_blob()
            out[f"{prefix}pairs"] = self.pair_positions.astype(np.int32 if len(self.blob) < 2 ** 31 else np.int64)
            out[f"{prefix}pair_off"] = self.pair_off
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> "PostingLists | None":
        lists = cls()
        raw = arrays[f"{prefix}terms"]
        text = raw.tobytes().decode("utf-8", "surrogatepass")
        lists.terms = text.split("\n") if text else []
        lists._term_id = None
        lists.base_off = arrays[f"{prefix}off"]
        lists.base_docs = arrays[f"{prefix}docs"]
        lists.base_tf = arrays[f"{prefix}tf"]
        lists.base_terms = len(lists.base_off) - 1
        if lists.base_terms != len(lists.terms) or int(lists.base_off[-1]) != len(lists.base_docs):
            return None
        lists.has_delta = Vec(np.bool_, np.zeros(len(lists.terms), dtype=bool))
        lists._blob_stale = True  # built on first substring search: BM25-only processes never need it
        pairs, pair_off = arrays.get(f"{prefix}pairs"), arrays.get(f"{prefix}pair_off")
        if pairs is not None and pair_off is not None and lists.terms:
            blob = np.concatenate([raw, np.array([10], dtype=np.uint8)])
            if len(pair_off) != 65537 or int(pair_off[0]) != 0 or int(pair_off[-1]) != len(blob) - 1 \
                    or len(pairs) != len(blob) - 1 or bool((np.diff(pair_off) < 0).any()):
                return None
            if len(pairs) and (int(pairs.min()) < 0 or int(pairs.max()) >= len(blob) - 1):
                return None
            newlines = np.flatnonzero(blob == 10)
            if len(newlines) != len(lists.terms):
                return None
            lists.blob, lists.pair_positions, lists.pair_off = blob, pairs, pair_off
            lists.blob_starts = np.concatenate([[0], newlines[:-1] + 1]).astype(np.int64)
            lists.blob_terms, lists._blob_stale = len(lists.terms), False
        return lists
