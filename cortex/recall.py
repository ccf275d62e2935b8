"""Recall: which memories answer a query under the AND-token contract.

These functions work on an agent's :class:`~cortex.index.postings.AgentIndex` and return memory ids, best
first; loading the memories is the facade's job.
"""

from __future__ import annotations

from collections.abc import Sequence

from cortex.index.postings import AgentIndex
from cortex.model import MemoryType
from cortex.text import query_tokens


def recall_ids(
    index: AgentIndex,
    query: str | None,
    *,
    types: Sequence[MemoryType] | None = None,
    projects: Sequence[str] | None = None,
    limit: int = 10,
) -> list[str]:
    """AND-token recall (DESIGN.md section 4).

    Every whitespace token of the query must occur in the content (after NFKC + casefold; inside a word
    counts). Order: total token occurrences, then usageCount, then lastUsedAt, all descending. Without a
    query: every memory passing the filters, by usageCount then lastUsedAt.
    """
    return index.search_all(query_tokens(query), types=types, projects=projects, limit=limit)
