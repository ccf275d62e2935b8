"""Lifecycle rules: which memories ``prune`` removes."""

from __future__ import annotations

from datetime import datetime, timedelta

from cortex.index.postings import AgentIndex, to_micros

DEFAULT_MIN_CONFIDENCE = 0.3


def prune_candidates(
    index: AgentIndex, *, min_confidence: float, max_age: timedelta | None, now: datetime
) -> list[str]:
    """Ids of memories with confidence strictly below ``min_confidence``, or (when ``max_age`` is given)
    not used for longer than ``max_age`` before ``now``."""
    doomed = index.confidence.view < min_confidence
    if max_age is not None:
        doomed |= index.last_used.view < to_micros(now - max_age)
    return index.select(doomed)
