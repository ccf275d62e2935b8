"""Lifecycle rules: which memories ``prune`` removes."""

from __future__ import annotations

from datetime import datetime, timedelta

from cortex.index.memory_index import MemoryIndex, to_micros


def prune_candidates(
    index: MemoryIndex, *, min_confidence: float, max_age: timedelta | None, now: datetime
) -> list[str]:
    """Ids of memories with confidence strictly below ``min_confidence``, or (when ``max_age`` is given)
    not used for longer than ``max_age`` before ``now``."""
    doomed = index.col("confidence") < min_confidence
    if max_age is not None:
        try:
            cutoff = to_micros(now - max_age)
        except OverflowError:  # older than the calendar: nothing can have been unused that long
            cutoff = None
        if cutoff is not None:
            doomed |= index.col("last_used") < cutoff
    return index.select(doomed)
