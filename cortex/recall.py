"""Recall: which memories answer a query (AND-token contract) or are relevant to a task.

These functions work on an agent's :class:`~cortex.index.postings.AgentIndex` and return memory ids, best
first; loading the memories is the facade's job.
"""

from __future__ import annotations

from collections.abc import Sequence

from cortex.index.postings import AgentIndex
from cortex.model import MemoryType
from cortex.text import query_tokens, task_words


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


def relevant_ids(
    index: AgentIndex,
    task: str | None,
    *,
    projects: Sequence[str] | None = None,
    limit: int = 5,
) -> list[str]:
    """What to show an agent starting on ``task``.

    AND-token recall first; when it finds nothing (a task sentence rarely contains every word of a
    memory), memories sharing the most content words of the task; when none shares any, the most used.
    """
    if task and task.strip():
        ids = recall_ids(index, task, projects=projects, limit=limit)
        if ids:
            return ids
        words = task_words(task)
        if words:
            ids = index.search_any(words, projects=projects, limit=limit)
            if ids:
                return ids
    return index.search_all([], projects=projects, limit=limit)
