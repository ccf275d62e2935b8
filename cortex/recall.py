"""Recall: which memories answer a query under the AND-token contract (docs/architecture.md, "Recall, start and end").

Works on a scope's :class:`~cortex.index.memory_index.MemoryIndex` and returns memory ids, best first;
loading the memories is the repository's job.
"""

from __future__ import annotations

from cortex.index.memory_index import MemoryIndex
from cortex.model import Query
from cortex.text import query_tokens


def recall_scored(index: MemoryIndex, query: Query) -> list[tuple[str, float]]:
    """(id, token occurrences) of the best ``query.limit`` matches.

    Every whitespace token of the query must occur in the content (after NFKC + casefold; inside a word
    counts). Order: total token occurrences, then usageCount, then lastUsedAt, all descending. Without a
    query: every memory passing the filters, by usageCount then lastUsedAt.
    """
    return index.search_all(query_tokens(query.text), query.filters, query.limit)


def recall_ids(index: MemoryIndex, query: Query) -> list[str]:
    """The ids of :func:`recall_scored`."""
    return [i for i, _ in recall_scored(index, query)]
