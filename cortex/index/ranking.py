"""Reading a :class:`~cortex.index.memory_index.MemoryIndex`: AND-token recall, filters and the time masks, BM25
and the ranking of candidates (by their scores, then usage and recency)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cortex.index.layout import NEVER, SOURCE_CODES, TYPE_CODES, IndexData, to_micros
from cortex.model import Filters


def combined_stats(parts: Sequence[tuple[int, float, int, dict[str, int]]]) -> tuple[int, float, dict[str, int]]:
    """The BM25 collection statistics (N, average length, document frequencies) of several indexes together."""
    n_docs = sum(p[0] for p in parts)
    live = sum(p[2] for p in parts)
    df: dict[str, int] = {}
    for part in parts:
        for term, count in part[3].items():
            df[term] = df.get(term, 0) + count
    return n_docs, (sum(p[1] for p in parts) / live if live else 0.0), df


#: Candidates ranked on their columns directly (more: by the precomputed ranks).
_EXACT_RANK = 256
#: Documents with stale or missing ranks tolerated before the ranks are recomputed (or 1/32 of the documents).
_STALE_RANKS = 1024
#: The cache of token hits (:meth:`Ranking._hits`): at most this many bytes and tokens.
_HIT_BYTES = 64 << 20
_HIT_TOKENS = 4096


class Ranking(IndexData):
    """Recall, filters and scores over an index (a base of :class:`~cortex.index.memory_index.MemoryIndex`)."""

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
        usage, last use, creation and document number, all descending.

        Many candidates: the last four keys are one precomputed rank per document (:meth:`_priorities`), exact
        for the documents whose keys did not change since it was computed; the others (few) are ranked on their
        columns together with the best of the rest."""
        if len(docs) <= _EXACT_RANK:
            return self._rank_exact(docs, primary, limit)
        prio, stale = self._priorities()
        if len(prio) == len(self.ids) and self._prio is not None and self._prio[2] == 0:
            return _top_k_prio(primary, prio[docs], limit, len(prio))  # none stale: the ranks decide alone
        clean = docs < len(prio)
        clean[clean] = ~stale[docs[clean]]
        rows = np.flatnonzero(clean)
        best: np.ndarray = rows[_top_k_prio([key[rows] for key in primary], prio[docs[rows]], limit, len(prio))]
        if len(rows) == len(docs):
            return best
        pool = np.concatenate([best, np.flatnonzero(~clean)])
        pool.sort()
        chosen: np.ndarray = pool[self._rank_exact(docs[pool], [key[pool] for key in primary], limit)]
        return chosen

    def _rank_exact(self, docs: np.ndarray, primary: list[np.ndarray], limit: int) -> np.ndarray:
        keys = [*primary, self.col("usage")[docs], self.col("last_used")[docs], self.col("created")[docs], docs]
        return _top_k(keys, limit)

    def _priorities(self) -> tuple[np.ndarray, np.ndarray]:
        """Each document's rank by (usage, last use, creation, document number), ascending, and which documents'
        ranks are stale (their keys changed since, see :meth:`_touched`); documents added since have none.
        Recomputed when too many are stale or missing."""
        n = len(self.ids)
        cached = self._prio
        if cached is not None:
            prio, stale, count = cached
            if count + n - len(prio) <= max(_STALE_RANKS, n // 32):
                return prio, stale
        order = np.lexsort((np.arange(n), self.col("created"), self.col("last_used"), self.col("usage")))
        prio = np.empty(n, dtype=np.int64)
        prio[order] = np.arange(n)
        stale = np.zeros(n, dtype=bool)
        self._prio = (prio, stale, 0)
        return prio, stale

    def _touched(self, doc: int) -> None:
        """The ranking keys of ``doc`` changed: its precomputed rank no longer holds."""
        cached = self._prio
        if cached is not None and doc < len(cached[0]) and not cached[1][doc]:
            cached[1][doc] = True
            self._prio = (cached[0], cached[1], cached[2] + 1)

    def search_all(self, tokens: Sequence[str], filters: Filters, limit: int) -> list[tuple[str, float]]:
        """AND-token recall: (id, total token occurrences) of the memories containing every token, best
        first (docs/architecture.md, "Recall, start and end"); without tokens, every memory passing the filters."""
        if not tokens:
            every = np.arange(len(self.ids))
            every = every[self.keep(every, filters)]
            return [(self._named(int(every[i])), 0.0) for i in self._rank(every, [], limit)]
        # rarest token first; a token far more frequent than the candidates left is checked on them alone
        matched = [self.raw.containing(token) for token in tokens]
        sizes = [self.raw.df_total(tids) for tids, _ in matched]
        docs: np.ndarray | None = None
        occ: np.ndarray | None = None
        for k in sorted(range(len(tokens)), key=sizes.__getitem__):
            if docs is None or occ is None:
                docs, occ, _ = self._hits(tokens[k], matched[k])
                keep = self.keep(docs, filters)
                docs, occ = docs[keep], occ[keep]
            elif tokens[k] not in self._hit_cache and sizes[k] > 4 * len(docs):
                counts = self.raw.counts_in(*matched[k], docs)
                found = counts > 0
                docs, occ = docs[found], occ[found] + counts[found]
            else:
                hit, count, dense = self._hits(tokens[k], matched[k])
                if dense is not None:  # a frequent token: one gather
                    counts = dense[docs]
                    found = counts > 0
                    docs, occ = docs[found], occ[found] + counts[found]
                else:  # both sorted and distinct: a binary search of one in the other beats intersect1d's sort
                    at = np.minimum(np.searchsorted(hit, docs), max(len(hit) - 1, 0))
                    both = hit[at] == docs if len(hit) else np.zeros(len(docs), dtype=bool)
                    docs, occ = docs[both], occ[both] + count[at[both]]
            if len(docs) == 0:
                return []
        assert docs is not None and occ is not None
        counts = occ.astype(np.int64)  # whole numbers: ranked on an exact integer key
        return [(self._named(int(docs[i])), float(occ[i])) for i in self._rank(docs, [counts], limit)]

    def _hits(self, token: str, matched: tuple[np.ndarray, np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`_token_hits`, and for a frequent token its occurrences in every document (0 where none), kept
        until the next write (agents repeat their words, and a frequent token costs a pass over its postings)."""
        stamp = (self._epoch, len(self.ids))
        cached = self._hit_cache.get(token)
        if cached is not None and cached[0] == stamp:
            self._hit_cache.move_to_end(token)
            return cached[1], cached[2], cached[3]
        docs, occ = self._token_hits(token, matched)
        dense = None
        if len(docs) * 16 > len(self.ids):
            dense = np.zeros(len(self.ids), dtype=np.float32)  # occurrences are small integers: exact
            dense[docs] = occ
        size = docs.nbytes + occ.nbytes + (dense.nbytes if dense is not None else 0)
        if cached is not None:
            self._drop_hits(token)
        if size <= _HIT_BYTES // 4:
            self._hit_cache[token] = (stamp, docs, occ, dense, size)
            self._hit_bytes += size
            while self._hit_bytes > _HIT_BYTES or len(self._hit_cache) > _HIT_TOKENS:
                self._drop_hits(next(iter(self._hit_cache)))
        return docs, occ, dense

    def _drop_hits(self, token: str) -> None:
        self._hit_bytes -= self._hit_cache.pop(token)[4]

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

    # -- BM25 ------------------------------------------------------------------------------------

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
            self._lengths = (float(self.col("doc_len")[self.alive.view].sum()), len(self))
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
        if len(self) == 0 or len(tids) == 0:
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
        return [(self._named(int(docs[i])), float(scores[docs[i]])) for i in self._rank(docs, [scores[docs]], limit)]


def _top_k_prio(primary: list[np.ndarray], prio: np.ndarray, k: int, n: int) -> np.ndarray:
    """:func:`_top_k` of ``[*primary, prio]`` where ``prio`` holds distinct ranks below ``n``; one integral key
    (recall's occurrences) is folded with the ranks into one exact integer key."""
    if len(primary) == 1 and len(prio) > k >= 1 and primary[0].dtype.kind == "i":
        occ = primary[0]
        if 0 <= int(occ.max()) < 2 ** 62 // max(n, 1):
            key = occ * n + prio
            best = np.argpartition(-key, k - 1)[:k]
            return best[np.argsort(-key[best])]
    return _top_k([*primary, prio], k)


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
