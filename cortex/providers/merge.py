"""Merging Cortex's own ranked memories with the hits of memory providers: one list, deduplicated, each memory
labelled with where it lives (``Memory.origin``).

Scores of different systems are not comparable (Cortex's fused BM25 and cosine, a mem0 similarity, an OpenViking
rerank), so every candidate is scored again on one scale (:data:`Relevance`): the cosine of the store's own
embedding model when it has one, else BM25 over the candidates themselves. Each source keeps its own order (Cortex's
ranking has recency, use and confidence in it; a provider's has what it knows), and the lists are merged by their
heads, a head weighing as much as the best candidate it holds back; a provider's relevance counts ``weight`` times
(:data:`DEFAULT_WEIGHT`, ``CORTEX_PROVIDER_WEIGHT``) against Cortex's, and Cortex wins ties. ``bench/providers.py``
measures on LongMemEval that this keeps Cortex's own relevant hits in the top results when the providers answer
plausible but irrelevant memories. The same content found by several sources (a memory Cortex mirrored to mem0,
which mem0 returns) is one memory, Cortex's copy.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cortex import config
from cortex.model import DEFAULT_TYPE, Memory, Source
from cortex.index.analyzer import analyze, analyze_many
from cortex.providers.base import ProviderHit, finite_score

#: How much a provider's relevance counts against Cortex's own (1): its memory ranks above one of Cortex's only when it
#: is twice as relevant.
DEFAULT_WEIGHT = 0.5
#: The longest content of a provider's memory that is kept (the rest is cut, with an ellipsis).
MAX_CONTENT = 4000
#: The characters of a provider's memory the merge embeds: its start says what it is about, and embedding costs
#: grow with the length (a mem0 memory is one sentence; a long one is cut here).
MAX_EMBEDDED = 400
#: How many of one provider's hits are scored and may be merged: half the limit, at least this many (its relevance
#: counts half of Cortex's, so its tail rarely ranks; each one scored costs an embedding).
MIN_SCORED = 3
#: The most of one provider's hits scored whatever the limit (a search may ask for 10,000 memories: scoring that many
#: hits of each provider would embed them all, after the providers' time-out, on the request's time).
MAX_SCORED = 50
#: The longest provider id kept in a memory's metadata.
MAX_PROVIDER_ID = 512

_SPACE = re.compile(r"\s+")


def content_key(text: str) -> str:
    """What two memories must share to be the same one: the NFKC case-folded text, whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def as_memory(provider: str, agent: str, hit: ProviderHit, now: datetime) -> Memory:
    """A provider's hit as a :class:`Memory` of ``agent`` labelled ``origin=provider``: its id ``provider-<digest
    of the provider's id>`` (URL-safe, stable), the provider's id and score in ``metadata``."""
    digest = hashlib.sha256(hit.id.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    content = clean_text(hit.content[:MAX_CONTENT])
    content = content if len(hit.content) <= MAX_CONTENT else content[:MAX_CONTENT - 1] + "…"
    metadata: dict[str, Any] = {"provider": provider, "provider_id": clean_text(hit.id[:MAX_PROVIDER_ID])}
    score = finite_score(hit.score)
    if score is not None:
        metadata["provider_score"] = score
    created = hit.created_at if hit.created_at is not None and hit.created_at.tzinfo is not None else now
    return Memory.model_construct(
        id=f"{provider}-{digest}", agent=agent, content=content, type=DEFAULT_TYPE,
        project=config.DEFAULT_PROJECT, confidence=config.DEFAULT_CONFIDENCE, usage_count=0, created_at=created,
        last_used_at=created, source=Source.IMPORT, expires_at=None, tags=(), metadata=metadata, version=1,
        updated_at=created, validated_at=None, valid_from=created, valid_until=None, superseded_by=None,
        superseded_reason=None, scope="agent", author=None, used_count=0, origin=provider)


def clean_text(text: str) -> str:
    """A provider's ``text`` as valid Unicode a surface can send: each unpaired surrogate (which no UTF-8 answer
    can carry: it failed the whole HTTP response) a replacement character, control characters other than newline
    and tab and carriage return (NUL, terminal escapes) dropped."""
    return _CONTROL.sub("", _SURROGATE.sub("\ufffd", text))


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


#: How relevant each text is to a query, on one scale for every source (higher is better).
Relevance = Callable[[str, Sequence[str]], Sequence[float]]


def lexical_relevance(query: str, texts: Sequence[str]) -> list[float]:
    """BM25 of ``query`` over ``texts`` as their own corpus (Cortex's analyzer: stems, CJK grams)."""
    docs = [Counter(tokens) for tokens in analyze_many(list(texts))]
    terms = set(analyze(query))
    if not docs or not terms:
        return [0.0] * len(docs)
    lengths = [sum(d.values()) for d in docs]
    average = sum(lengths) / len(docs) or 1.0
    out = []
    for doc, length in zip(docs, lengths):
        score = 0.0
        for term in terms:
            f = doc.get(term, 0)
            if f:
                df = sum(1 for d in docs if term in d)
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / average))
        out.append(score)
    return out


def semantic_relevance(embed: Callable[[Sequence[str]], np.ndarray]) -> Relevance:
    """The cosine of each text with the query, from ``embed`` (unit-length rows: the store's embedding model)."""

    def relevance(query: str, texts: Sequence[str]) -> list[float]:
        rows = embed([query, *(text[:MAX_EMBEDDED] for text in texts)])
        return [float(x) for x in rows[1:] @ rows[0]]

    return relevance


def merge(own: Sequence[Memory], external: Mapping[str, Sequence[ProviderHit]], *, agent: str, limit: int,
          now: datetime, query: str, relevance: Relevance = lexical_relevance, weight: float = DEFAULT_WEIGHT,
          own_relevance: Sequence[float] | None = None, redact: Callable[[str], str] = lambda text: text
          ) -> list[tuple[Memory, float]]:
    """``own`` (Cortex's ranking, best first) and each provider's hits merged into at most ``limit`` memories,
    best first, each with its relevance (see the module's docstring). ``own_relevance``: the relevance of ``own``
    already known (the cosines Cortex's search computed), so only the providers' hits are scored. ``redact``: what
    Cortex did to what it sent (a mirrored memory comes back redacted), so that both sides compare alike."""
    seen = {content_key(redact(m.content)) for m in own}
    lists: list[list[Memory]] = [list(own)]
    weights = [1.0]
    for provider, hits in external.items():
        mine = []
        for hit in hits[:min(MAX_SCORED, max(MIN_SCORED, limit // 2))]:
            memory = as_memory(provider, agent, hit, now)
            key = content_key(redact(memory.content))
            if key and key not in seen:
                seen.add(key)
                mine.append(memory)
        lists.append(mine)
        weights.append(weight)
    known = own_relevance is not None and len(own_relevance) == len(own)
    texts = [m.content for candidates in (lists[1:] if known else lists) for m in candidates]
    scores = iter([*(own_relevance if known and own_relevance is not None else ()),
                   *(relevance(query, texts) if texts else [])])
    scored = [[(m, next(scores)) for m in candidates] for candidates in lists]
    # each list keeps its order, so a head weighs as much as the best memory it holds back (a suffix maximum)
    keys = []
    for candidates in scored:
        top, suffix = -math.inf, []
        for _, score in reversed(candidates):
            top = max(top, score)
            suffix.append(top)
        keys.append(suffix[::-1])
    heads = [0] * len(scored)
    out: list[tuple[Memory, float]] = []
    while len(out) < limit:
        best: tuple[int, float] | None = None
        for i, candidates in enumerate(scored):  # Cortex's list first: it wins ties
            if heads[i] < len(candidates):
                value = keys[i][heads[i]] * weights[i]
                if best is None or value > best[1]:
                    best = (i, value)
        if best is None:
            break
        memory, score = scored[best[0]][heads[best[0]]]
        heads[best[0]] += 1
        out.append((memory, score))
    return out
