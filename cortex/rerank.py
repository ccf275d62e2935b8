"""Reranking of ranked-search candidates by recency, use and confidence.

Each factor multiplies the fused relevance (normalised so the best candidate is 1.0) and stays within a
bounded range, so a strongly relevant old memory still beats a barely relevant fresh one:

* recency: ``floor + (1 - floor) * 0.5 ** (days since lastUsedAt / half_life_days)`` (default floor 0.9,
  half-life 14 days);
* usage: ``1 + (max_usage_boost - 1) * min(1, log1p(usageCount) / log1p(saturation))`` (up to 1.5x at 10 uses);
* used: ``1 + (max_used_boost - 1) * min(1, log1p(usedCount) / log1p(used_saturation))`` (up to 1.5x at 5 uses):
  an agent's later output drew on the memory (:mod:`cortex.capture.usage`); unlike usage, being shown does not
  count, so the block's ranking keeps it; ``explain`` reports it multiplied into ``usage``;
* unused: a memory shown (``usageCount``) more than ``unused_grace`` times that no output drew on
  (``usedCount`` 0) weighs ``max(unused_floor, 0.5 ** ((usageCount - unused_grace) / unused_halving))`` (default:
  from the fourth showing, half at the eighth, never below 0.5): what is shown again and again and never helps
  gives its place to what might; ``explain`` reports it multiplied into ``usage``; on in the block's ranking, off
  by default in search (``Reranking(unused=True)`` turns it on), where usageCount also counts explicit touches;
* confidence: ``0.5 + 0.5 * confidence``;
* decay: ``0.5 ** (age_days / half_life_days)`` by the memory's source, the age counted from its latest
  creation, update or validation (:meth:`cortex.lifecycle.Policy.decay`); it weighs the score as
  ``decay_floor + (1 - decay_floor) * decay`` (``decay_weight``), bounded (default floor 0.9): measured on LoCoMo and
  LongMemEval, the bare factor cost up to 0.21 of recall@10 on questions about old facts (docs/retrieval.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

import numpy as np

from cortex.index.memory_index import to_micros
from cortex.lifecycle import Policy
# the settings are a parameter of the API: they live in the model layer
from cortex.model import DECAY_FLOOR as DECAY_FLOOR
from cortex.model import Reranking as Reranking

#: The index columns :func:`factors` reads.
COLUMNS = ("last_used", "usage", "used", "confidence", "source", "created", "updated", "validated")


def factors(self: Reranking, columns: Mapping[str, np.ndarray], now: datetime,
        policy: Policy | None = None) -> dict[str, np.ndarray]:
    """The multiplicative factors of candidates under the settings ``self``, from their index columns (:data:`COLUMNS`, one value per
    candidate); 1.0 for a switched-off factor, decay by ``policy`` (the defaults when None). Computed before
    any memory is loaded, so only the hits that survive are read from the store."""
    n = len(columns["usage"])
    ones = np.ones(n, dtype=np.float64)
    recency = usage = used = unused = confidence = decay = weight = ones
    now_us = to_micros(now)
    if self.recency:
        days = np.maximum(0.0, (now_us - columns["last_used"]) / 86_400e6)
        recency = self.recency_floor + (1 - self.recency_floor) * 0.5 ** (days / self.half_life_days)
    if self.usage:
        share = np.minimum(1.0, np.log1p(columns["usage"]) / math.log1p(self.usage_saturation))
        usage = 1 + (self.max_usage_boost - 1) * share
    if self.used:
        used = 1 + (self.max_used_boost - 1) * np.minimum(1.0, np.log1p(columns["used"]) /
                                                         math.log1p(self.used_saturation))
    if self.unused:
        beyond = np.maximum(0.0, columns["usage"].astype(np.float64) - self.unused_grace)
        unused = np.where(columns["used"] > 0, 1.0,
                          np.maximum(self.unused_floor, 0.5 ** (beyond / self.unused_halving)))
    if self.confidence:
        confidence = 0.5 + 0.5 * columns["confidence"].astype(np.float64)
    if self.decay:
        start = np.maximum(np.maximum(columns["created"], columns["updated"]), columns["validated"])
        decay = (policy or DEFAULT_POLICY).decay(start, columns["source"], now_us)
        weight = self.decay_floor + (1 - self.decay_floor) * decay
    # one "usage" factor (shown or touched, times drawn on, times never drawn on): explain keeps its keys
    return {"recency": recency, "usage": usage * used * unused, "confidence": confidence, "decay": decay,
            "decay_weight": weight}


DEFAULT_POLICY = Policy()
NO_RERANKING = Reranking(recency=False, usage=False, used=False, unused=False, confidence=False, decay=False,
                         overfetch=1)
