"""Ranked search beside the AND-token contract: which memories best answer a question.

Modes: ``all`` (the AND-token recall), ``bm25`` (Okapi BM25 over analysed terms), ``semantic`` (cosine
similarity of embedding vectors) and ``hybrid`` (both, fused). Whether a provider is there to embed the
query is the facade's business (:meth:`cortex.Cortex.search`); this module ranks.

Fusion (``hybrid``) works on a candidate pool: the best ``depth`` documents of each ranker, filters
applied. Every pool member has both scores (both rankers score every document), so nothing is guessed for
a document only one ranker liked. Methods:

* ``gated`` (the default): ``bm25 / max(bm25) + a * g * cosine``, the cosine in its own units, weighted by how
  far the semantic side's best candidate stands out from the pool's median, ``g = min(1, (max - median) /
  spread)``. A semantic side that cannot tell its candidates apart (flat cosines: ``g`` near 0, or differences
  far smaller than the lexical ones) cannot reorder the lexical ranking, so hybrid does not fall below bm25 when
  the model is weak; when it is sure, it moves a memory by its cosine lead;
* ``linear``: relative score fusion, ``w * minmax(bm25) + (1 - w) * minmax(cosine)`` over the pool (min-max
  stretches even a flat cosine spread to the full range: the former default, it fell below bm25 on long
  memories);
* ``rrf``: reciprocal rank fusion, ``1 / (k + rank_bm25) + 1 / (k + rank_cosine)``;
* ``dbsf``: distribution-based score fusion, each score scaled by mean +- 3 standard deviations of its
  ranker's top ``depth``.

The default is chosen by measurement (bench/retrieval.py; docs/retrieval.md has the figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

import numpy as np

from cortex.errors import InvalidInputError
from cortex.index.analyzer import analyze
from cortex.index.memory_index import combined_stats
from cortex.lifecycle import Policy
from cortex.memories import MemoryRepository
from cortex.model import Filters, Hit, Query, Scope, SearchResult
from cortex.recall import Part, merge, parts_of, recall_scored
from cortex.rerank import COLUMNS as RERANK_COLUMNS
from cortex.rerank import Reranking
from cortex.rerank import factors as rerank_factors
from cortex.temporal import BOOST as TIME_BOOST
from cortex.temporal import time_cue


class SearchMode(StrEnum):
    """How :meth:`cortex.Cortex.search` ranks."""

    ALL = "all"
    BM25 = "bm25"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


def check_mode(value: object) -> SearchMode:
    """Validate a search mode given as :class:`SearchMode` or its string value."""
    try:
        return SearchMode(value if isinstance(value, str) else repr(value))
    except ValueError:
        allowed = ", ".join(m.value for m in SearchMode)
        raise InvalidInputError("mode", f"unknown search mode {value!r}; use one of {allowed}") from None


FUSION_METHODS = ("gated", "linear", "rrf", "dbsf")


@dataclass(frozen=True)
class Fusion:
    """How ``hybrid`` combines the lexical and the semantic ranking."""

    method: str = "gated"
    #: ``gated``: the weight of the cosine against the lexical score scaled to 1 for the best candidate
    semantic_weight: float = 3.0
    #: ``gated``: the lead of the best cosine over the pool's median at which the semantic side has its full weight
    confidence_spread: float = 0.35
    #: share of the lexical score in ``linear`` (the semantic score gets the rest)
    lexical_weight: float = 0.5
    rrf_k: int = 60
    #: candidates taken from each ranker
    depth: int = 100
    #: the relevance floor: a memory that shares no term with the query and whose cosine similarity is below
    #: this is unrelated, and is not returned (semantic and hybrid modes)
    min_similarity: float = 0.15

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise InvalidInputError("fusion", f"unknown method {self.method!r}; use one of {', '.join(FUSION_METHODS)}")
        if not 0 <= self.lexical_weight <= 1:
            raise InvalidInputError("lexical_weight", f"must be between 0 and 1, not {self.lexical_weight!r}")
        if not 0 <= self.semantic_weight <= 100:
            raise InvalidInputError("semantic_weight", f"must be between 0 and 100, not {self.semantic_weight!r}")
        if not 0 < self.confidence_spread <= 2:
            raise InvalidInputError("confidence_spread", f"must be above 0 and at most 2, not {self.confidence_spread!r}")
        if not (isinstance(self.depth, int) and self.depth >= 1):
            raise InvalidInputError("depth", f"must be an integer >= 1, not {self.depth!r}")
        if not -1 <= self.min_similarity <= 1:
            raise InvalidInputError("min_similarity", f"must be between -1 and 1, not {self.min_similarity!r}")


@dataclass(frozen=True)
class Ranked:
    """One ranked memory (its scope and id) with its score components."""

    scope: Scope
    id: str
    score: float
    components: dict[str, float]


def rank(
    parts: Sequence[Part],
    query: Query,
    mode: SearchMode,
    *,
    query_vector: np.ndarray | None = None,
    fusion: Fusion = Fusion(),
) -> list[Ranked]:
    """The best ``query.limit`` memories of the ``parts`` (one collection: BM25 statistics are shared) for
    ``query`` in ``mode``; ``semantic`` and ``hybrid`` need ``query_vector``."""
    text = query.text or ""
    limit, filters = query.limit, query.filters
    if mode is SearchMode.ALL:
        return [Ranked(p.scope, i, s, {"lexical": s}) for p, i, s in recall_scored(parts, query)]
    terms = analyze(text)
    stats = None if len(parts) == 1 else combined_stats([p.index.term_stats(terms) for p in parts])
    if mode is SearchMode.BM25:
        found = merge([(p, p.index.top(p.index.bm25_scores(terms, stats=stats), filters, limit)) for p in parts],
                      limit)
        return [Ranked(p.scope, i, s, {"lexical": s}) for p, i, s in found]
    if query_vector is None:
        raise ValueError(f"{mode.value} search needs a query vector")
    # a large scope scores only its vector graph's candidates (others: -inf), enough to fill each ranker's list
    wanted = limit if mode is SearchMode.SEMANTIC else max(fusion.depth, limit)
    cosines = [p.index.cosine_scores(query_vector, filters, wanted) for p in parts]
    if mode is SearchMode.SEMANTIC:
        found = merge([(p, p.index.top(c, filters, limit, eligible=p.index.has_vector.view & (c >= fusion.min_similarity)))
                       for p, c in zip(parts, cosines)], limit)
        return [Ranked(p.scope, i, s, {"semantic": s}) for p, i, s in found]
    lexicals = [p.index.bm25_scores(terms, stats=stats) for p in parts]
    return _fuse(parts, lexicals, cosines, filters, limit, fusion, query_vector)


def _fuse(
    parts: Sequence[Part],
    lexicals: Sequence[np.ndarray],
    cosines: Sequence[np.ndarray],
    filters: Filters,
    limit: int,
    fusion: Fusion,
    query_vector: np.ndarray,
) -> list[Ranked]:
    depth = max(fusion.depth, limit)
    # the floor: what matches no term and is semantically weak is unrelated, however few results that leaves;
    # a document a vector graph did not propose (-inf) is not among the semantic ranker's best
    related = [p.index.has_vector.view & ((lex > 0) | (cos >= fusion.min_similarity)) & (cos > -np.inf)
               for p, lex, cos in zip(parts, lexicals, cosines)]
    lex_top = merge([(p, p.index.top(lex, filters, depth)) for p, lex in zip(parts, lexicals)], depth)
    sem_top = merge([(p, p.index.top(cos, filters, depth, eligible=rel))
                     for p, cos, rel in zip(parts, cosines, related)], depth)
    position = {p.scope: k for k, p in enumerate(parts)}
    pool = list(dict.fromkeys([(position[p.scope], i) for p, i, _ in lex_top + sem_top]))
    if not pool:
        return []
    docs = [parts[k].index.doc(i) for k, i in pool]
    for k, d in zip(pool, docs):  # a lexical candidate the graph did not propose: its exact cosine
        if cosines[k[0]][d] == -np.inf:
            cosines[k[0]][d] = parts[k[0]].index.cosines_at(np.array([d]), query_vector)[0]
    has_vector = np.array([bool(parts[k].index.has_vector.view[d]) for (k, _), d in zip(pool, docs)])
    lex = np.array([lexicals[k][d] for (k, _), d in zip(pool, docs)], dtype=np.float64)
    sem = np.where(has_vector, [cosines[k][d] for (k, _), d in zip(pool, docs)], 0.0)
    lex_scores, sem_scores = np.array([s for _, _, s in lex_top]), np.array([s for _, _, s in sem_top])
    if fusion.method == "gated":
        fused = _gated(lex, sem, has_vector, fusion)
    elif fusion.method == "rrf":
        fused = _rrf(lex, lex_scores, fusion.rrf_k) + _rrf(sem, sem_scores, fusion.rrf_k, present=has_vector)
    else:
        if fusion.method == "linear":
            lex_n, sem_n = _minmax(lex, lex), _minmax(sem, sem[has_vector])
        else:
            lex_n, sem_n = _dbsf(lex, lex_scores), _dbsf(sem, sem_scores)
        fused = fusion.lexical_weight * lex_n + (1 - fusion.lexical_weight) * np.where(has_vector, sem_n, 0.0)
    keys = [np.array([parts[k].index.col(c)[d] for (k, _), d in zip(pool, docs)])
            for c in ("created", "last_used", "usage")]
    order = np.lexsort([-k for k in [*keys, fused]])[:limit]
    return [
        Ranked(parts[pool[p][0]].scope, pool[p][1], float(fused[p]),
               {"lexical": float(lex[p]), "semantic": float(sem[p]), "fused": float(fused[p])})
        for p in order
    ]


def _gated(lex: np.ndarray, sem: np.ndarray, has_vector: np.ndarray, fusion: Fusion) -> np.ndarray:
    """``lex / max(lex) + a * g * cosine`` (see the module's docstring): the semantic side's say grows with how
    far its best candidate stands out from the pool's median cosine."""
    top = float(lex.max()) if len(lex) else 0.0
    lexical = lex / top if top > 0 else np.zeros_like(lex)
    cosines = sem[has_vector]
    if len(cosines) == 0:
        return lexical
    # nothing matched a word: there is no lexical ranking to protect, and the cosine alone ranks
    lead = float(cosines.max() - np.median(cosines)) if top > 0 else fusion.confidence_spread
    gate = min(1.0, max(0.0, lead / fusion.confidence_spread))
    return lexical + fusion.semantic_weight * gate * np.where(has_vector, sem, 0.0)


def _minmax(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    if len(reference) == 0:
        return np.zeros_like(values)
    low, high = float(reference.min()), float(reference.max())
    if high <= low:
        return np.where(values >= high, 1.0, 0.0) if high > 0 else np.zeros_like(values)
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def _dbsf(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    if len(reference) == 0:
        return np.zeros_like(values)
    mean, std = float(reference.mean()), float(reference.std())
    if std == 0:
        return np.where(values >= mean, 1.0, 0.0) if mean > 0 else np.zeros_like(values)
    low, high = mean - 3 * std, mean + 3 * std
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def _rrf(values: np.ndarray, ranked_scores: np.ndarray, k: int, present: np.ndarray | None = None) -> np.ndarray:
    """1 / (k + rank) where rank is the 1-based position of each value among the ranker's top scores
    (descending); values below the ranker's top list, or absent, contribute nothing."""
    if len(ranked_scores) == 0:
        return np.zeros_like(values)
    ascending = -ranked_scores  # ranked_scores is descending
    rank = np.searchsorted(ascending, -values, side="left") + 1
    contribution = 1.0 / (k + rank)
    inside = values >= ranked_scores[-1]
    if present is not None:
        inside &= present
    return np.where(inside & (values > 0) if present is None else inside, contribution, 0.0)


def search(
    memories: MemoryRepository,
    scopes: Sequence[Scope],
    query: Query,
    requested: SearchMode,
    *,
    reranking: Reranking,
    explain: bool,
    fusion: Fusion,
    now: datetime,
    policy: Policy | None = None,
) -> SearchResult:
    """Ranked search of the ``scopes`` an agent reads: embed the query when the mode needs it (falling back to
    bm25, with a note, when it cannot), rank, load the hits, rerank by recency, use, confidence and decay.

    Ranked modes over-fetch ``reranking.overfetch`` times the limit; ``all`` keeps the contract's order.
    ``explain`` always gives ``lexical``, ``semantic``, ``fused``, ``recency``, ``usage``, ``confidence`` and
    ``decay`` (the factor) and ``decay_weight`` with ``score == fused * recency * usage * confidence *
    decay_weight``. A query that names a time back from now ("two weeks ago", :mod:`cortex.temporal`) fetches
    more candidates and multiplies the relevance of those written around then by ``cortex.temporal.BOOST``
    (in ``fused``).
    """
    used, note, query_vector = requested, None, None
    if requested in (SearchMode.SEMANTIC, SearchMode.HYBRID):
        note = next(filter(None, (memories.semantic_unavailable(s) for s in scopes)), None)
        if note is None:  # outside the repository's lock: other requests go on while the query is embedded
            query_vector, note = memories.embed_query(query.text or "")
        if note is not None:
            used, note = SearchMode.BM25, f"{requested.value} search fell back to bm25: {note}"
    reranked = used is not SearchMode.ALL and reranking.enabled
    # "two weeks ago" counts back from the moment the search is about: as_of when it asks about the past
    cue = time_cue(query.text or "", query.filters.as_of or now) if used is not SearchMode.ALL else None
    fetch = min(query.limit * max(reranking.overfetch, 3 if cue else 1), 10_000) if reranked or cue else query.limit
    with memories.lock:
        parts = parts_of(memories.index, scopes)
        ranked = rank(parts, replace(query, limit=fetch), used, query_vector=query_vector, fusion=fusion)
        scores = np.array([r.score for r in ranked], dtype=np.float64)
        columns = _columns(parts, ranked) if ranked and (reranked or cue) else {}
        if cue is not None and ranked:  # "a week ago": what was written then is favoured (cortex.temporal)
            scores = scores * np.where(cue.near(columns["created"]) & (scores > 0), TIME_BOOST, 1.0)
        if reranked and ranked:
            # relevance relative to the best candidate, so the factors' bounded ranges mean the same thing in
            # every mode (a cosine of 0.3 and a BM25 of 12 are not comparable); factors from the index columns,
            # so only the hits kept are loaded
            top = float(scores.max())
            fused = np.maximum(scores, 0.0) / top if top > 0 else np.zeros(len(scores))
            factors = rerank_factors(reranking, columns, now, policy)
            scores = fused * factors["recency"] * factors["usage"] * factors["confidence"] * factors["decay_weight"]
            order = np.argsort(-scores, kind="stable")[: query.limit]
        else:
            fused, factors = scores, {}
            order = np.argsort(-scores, kind="stable")[: query.limit] if cue else np.arange(min(len(ranked), query.limit))
        chosen = [ranked[k] for k in order]
        loaded = {(m.scope, m.id): m for m in memories.load_many([(r.scope, r.id) for r in chosen])}
    hits = []
    for k, r in zip(order, chosen):
        memory = loaded.get((r.scope.relative, r.id))
        if memory is None:
            continue
        components = None
        if explain:
            components = {"lexical": 0.0, "semantic": 0.0, **r.components, "fused": float(fused[k])}
            for name in ("recency", "usage", "confidence", "decay", "decay_weight"):
                components[name] = float(factors[name][k]) if name in factors else 1.0
        hits.append(Hit.model_construct(memory=memory, score=float(scores[k]), explain=components))
    return SearchResult.model_construct(hits=hits, mode=used.value, requested_mode=requested.value, note=note)


def _columns(parts: Sequence[Part], ranked: Sequence[Ranked]) -> dict[str, np.ndarray]:
    """The reranking columns of the ranked candidates, in order, across their scopes."""
    if len(parts) == 1:
        return parts[0].index.columns([r.id for r in ranked], RERANK_COLUMNS)
    out: dict[str, np.ndarray] = {}
    for part in parts:
        positions = [k for k, r in enumerate(ranked) if r.scope == part.scope]
        if positions:
            values = part.index.columns([ranked[k].id for k in positions], RERANK_COLUMNS)
            for name, column in values.items():
                out.setdefault(name, np.zeros(len(ranked), dtype=column.dtype))[positions] = column
    return out
