"""Merging Cortex's own ranked memories with the hits of memory providers: one list, deduplicated, each memory
labelled with where it lives (``Memory.origin``).

The rankings are fused by weighted reciprocal rank (each source's rank r adds ``weight / (K + r)``; Cortex's own
weight is 1, a provider's :data:`DEFAULT_WEIGHT`): scores of different systems are not comparable (BM25 against a
mem0 cosine against an OpenViking rerank), ranks are. With K = 1 and a provider weight of 0.5, a provider's first
hit ranks just after Cortex's third and its second after Cortex's fifth, so the providers always show in a list of
ten, and Cortex's own relevant hits are not pushed out of the top (``bench/providers.py`` measures that on
LongMemEval). The same content found by several sources (a memory Cortex mirrored to mem0 and mem0 returns) is
one memory, Cortex's copy when it has one, with the fused scores added up.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cortex import config
from cortex.model import DEFAULT_TYPE, Memory, Source
from cortex.providers.base import ProviderHit

#: K of the reciprocal rank: small, so that the first ranks weigh much more than the tail.
K = 1.0
#: A provider's weight against Cortex's own (1).
DEFAULT_WEIGHT = 0.5
#: The longest content of a provider's memory that is kept (the rest is cut, with an ellipsis).
MAX_CONTENT = 4000
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
    content = hit.content if len(hit.content) <= MAX_CONTENT else hit.content[:MAX_CONTENT - 1] + "…"
    metadata: dict[str, Any] = {"provider": provider, "provider_id": hit.id[:MAX_PROVIDER_ID]}
    if hit.score is not None:
        metadata["provider_score"] = hit.score
    created = hit.created_at if hit.created_at is not None and hit.created_at.tzinfo is not None else now
    return Memory.model_construct(
        id=f"{provider}-{digest}", agent=agent, content=content, type=DEFAULT_TYPE,
        project=config.DEFAULT_PROJECT, confidence=config.DEFAULT_CONFIDENCE, usage_count=0, created_at=created,
        last_used_at=created, source=Source.IMPORT, expires_at=None, tags=(), metadata=metadata, version=1,
        updated_at=created, validated_at=None, valid_from=created, valid_until=None, superseded_by=None,
        superseded_reason=None, scope="agent", author=None, used_count=0, origin=provider)


def merge(own: Sequence[Memory], external: Mapping[str, Sequence[ProviderHit]], *, agent: str, limit: int,
          now: datetime, weight: float = DEFAULT_WEIGHT) -> list[tuple[Memory, float]]:
    """``own`` (Cortex's ranking, best first) and each provider's hits fused into at most ``limit`` memories, best
    first, with their fused scores (see the module's docstring)."""
    scores: dict[str, float] = {}
    chosen: dict[str, Memory] = {}
    order: list[str] = []

    def add(memory: Memory, rank: int, w: float) -> None:
        key = content_key(memory.content)
        if not key:
            return
        if key not in chosen:
            chosen[key] = memory
            order.append(key)
            scores[key] = 0.0
        elif chosen[key].origin != "cortex" and memory.origin == "cortex":
            chosen[key] = memory
        scores[key] += w / (K + rank)

    for rank, memory in enumerate(own, 1):
        add(memory, rank, 1.0)
    for provider, hits in external.items():
        for rank, hit in enumerate(hits, 1):
            add(as_memory(provider, agent, hit, now), rank, weight)
    # a stable sort: ties keep Cortex's (then the providers') order
    ranked = sorted(order, key=lambda key: -scores[key])[:limit]
    return [(chosen[key], scores[key]) for key in ranked]
