"""Recall: which memories answer a query under the AND-token contract (docs/architecture.md, "Recall, start and end").

Works on the derived indexes (:class:`~cortex.index.memory_index.MemoryIndex`) of the scopes an agent reads and
returns (scope, memory id), best first; loading the memories is the repository's job. :func:`merge` is how
every ranking reads several scopes as one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cortex.index.memory_index import MemoryIndex
from cortex.model import Query, Scope
from cortex.text import query_tokens


@dataclass(frozen=True)
class Part:
    """One scope read by a query, with its derived index."""

    scope: Scope
    index: MemoryIndex


def parts_of(indexes: Callable[[Scope], MemoryIndex], scopes: Sequence[Scope]) -> list[Part]:
    """The parts a query reads: each scope with its index (``indexes(scope)``), empty shared scopes left out
    (nothing to match; the first scope, the agent's own or the one named, always stays)."""
    parts = [Part(s, indexes(s)) for s in scopes]
    return [p for p in parts if len(p.index) or p is parts[0]]


def merge(results: Sequence[tuple[Part, Sequence[tuple[str, float]]]], limit: int) -> list[tuple[Part, str, float]]:
    """The best ``limit`` of several scopes' ranked (id, score) lists, in the order one index gives: by score,
    then usage, last use and creation (each list is already in that order)."""
    if len(results) == 1:
        part, ranked = results[0]
        return [(part, i, s) for i, s in ranked[:limit]]
    rows = []
    for k, (part, ranked) in enumerate(results):
        if not ranked:
            continue
        columns = part.index.columns([i for i, _ in ranked], ("usage", "last_used", "created"))
        usage, last_used, created = (columns[c].tolist() for c in ("usage", "last_used", "created"))
        for position, (memory_id, score) in enumerate(ranked):
            rows.append((-score, -usage[position], -last_used[position], -created[position], k, position, memory_id))
    rows.sort()
    return [(results[r[4]][0], r[6], -r[0]) for r in rows[:limit]]


def recall_scored(parts: Sequence[Part], query: Query) -> list[tuple[Part, str, float]]:
    """(part, id, token occurrences) of the best ``query.limit`` matches in the ``parts`` read as one.

    Every whitespace token of the query must occur in the content (after NFKC + casefold; inside a word
    counts). Order: total token occurrences, then usageCount, then lastUsedAt, all descending. Without a
    query: every memory passing the filters, by usageCount then lastUsedAt.
    """
    tokens = query_tokens(query.text)
    return merge([(p, p.index.search_all(tokens, query.filters, query.limit)) for p in parts], query.limit)


def recall_ids(parts: Sequence[Part], query: Query) -> list[tuple[Scope, str]]:
    """The (scope, id) of :func:`recall_scored`."""
    return [(p.scope, i) for p, i, _ in recall_scored(parts, query)]
