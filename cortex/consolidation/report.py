"""What a consolidation run did (or, dry, would do): the records every surface returns."""

from __future__ import annotations

from cortex.model import (
    Confirmation,
    ConsolidationReport,
    Eviction,
    MemberRound,
    Merge,
    ReviewItem,
    RunInfo,
    Supersession,
    TeamRound,
    UndoReport,
)

__all__ = ["Confirmation", "ConsolidationReport", "Eviction", "MemberRound", "Merge", "ReviewItem", "RunInfo",
           "Supersession", "TeamRound", "UndoReport"]
