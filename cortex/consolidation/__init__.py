"""Consolidation while agents sleep (docs/consolidation.md): near duplicates merged, contradictions superseded or
listed for review, sessions distilled into long-term learnings, a team memory kept by its lead's extractor; every
run one PROV-O activity, undone exactly by ``cortex consolidate --undo RUN``.

One module per concern: :mod:`.duplicates` (merges), :mod:`.contradictions`, :mod:`.distil` (sessions),
:mod:`.team` (the round end), :mod:`.runs` (the atomic write, the record, the undo), :mod:`.engine` (planning a
run), :mod:`.settings`, :mod:`.report` (what every surface returns).
"""

from cortex.consolidation.report import (
    Confirmation,
    ConsolidationReport,
    Eviction,
    Merge,
    ReviewItem,
    RunInfo,
    Supersession,
    UndoReport,
)
from cortex.consolidation.settings import ConsolidationSettings, consolidation_settings

__all__ = ["Confirmation", "ConsolidationReport", "ConsolidationSettings", "Eviction", "Merge", "ReviewItem",
           "RunInfo", "Supersession", "UndoReport", "consolidation_settings"]
