"""Ranked search beside the AND-token contract: which memories best answer a question.

Modes: ``all`` (the AND-token recall), ``bm25`` (Okapi BM25 over analysed terms). ``semantic`` and
``hybrid`` need an embedding provider; until one is configured they fall back to ``bm25`` and say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from cortex.errors import InvalidInputError
from cortex.index.analyzer import analyze
from cortex.index.postings import AgentIndex
from cortex.model import MemoryType
from cortex.text import query_tokens


class SearchMode(StrEnum):
    """How :meth:`cortex.Cortex.search` ranks."""

    ALL = "all"
    BM25 = "bm25"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


def check_mode(value: object) -> SearchMode:
    """Validate a search mode given as :class:`SearchMode` or its string value."""
    try:
        return SearchMode(value)
    except ValueError:
        allowed = ", ".join(m.value for m in SearchMode)
        raise InvalidInputError("mode", f"unknown search mode {value!r}; use one of {allowed}") from None


@dataclass(frozen=True)
class Ranked:
    """One ranked id with its score components."""

    id: str
    score: float
    components: dict[str, float]


def rank(
    index: AgentIndex,
    query: str,
    mode: SearchMode,
    *,
    types: Sequence[MemoryType] | None,
    projects: Sequence[str] | None,
    limit: int,
) -> tuple[list[Ranked], SearchMode, str | None]:
    """The best ids for ``query``, the mode actually used, and a note when it differs from ``mode``."""
    note = None
    used = mode
    if mode in (SearchMode.SEMANTIC, SearchMode.HYBRID):
        used = SearchMode.BM25
        note = f"no embedding provider configured: {mode.value} search fell back to bm25"
    if used is SearchMode.ALL:
        tokens = query_tokens(query)
        scored = index.search_all_scored(tokens, types=types, projects=projects, limit=limit)
        return [Ranked(i, s, {"lexical": s}) for i, s in scored], used, note
    scored = index.bm25(analyze(query), types=types, projects=projects, limit=limit)
    return [Ranked(i, s, {"lexical": s}) for i, s in scored], used, note
