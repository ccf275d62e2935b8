"""What a consolidation run did (or, dry, would do): the records every surface returns."""

from __future__ import annotations

from cortex.model import (
    Confirmation,
    ConsolidationReport,
    Eviction,
    Merge,
    ReviewItem,
    RunInfo,
    Supersession,
    UndoReport,
)

__all__ = ["Confirmation", "ConsolidationReport", "Eviction", "Merge", "ReviewItem", "RunInfo", "Supersession",
           "UndoReport"]
