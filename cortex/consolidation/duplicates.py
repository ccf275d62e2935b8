"""Near duplicates among a scope's current memories (docs/consolidation.md, "Merges").

The rules are the quality gate's (:mod:`cortex.capture.gate`): the same text once case, whitespace and the
punctuation around words are ignored; the same stemmed content words (Jaccard >= 0.8, a subset covering half of
the other, 0.9 when words are swapped); with an embedding model, a paraphrase that only adds or drops words
(cosine >= 0.9). Never when a number, path, flag or identifier differs, one is negated, or one says the
opposite of the other. Precision first: merging two different facts loses one, keeping a duplicate costs noise.

Each memory is compared with the survivors found before it, best first (most used, most confident, oldest):
so a cluster is the memories that repeat its survivor, never a chain drifting from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cortex.capture.gate import EXACT, Gate
from cortex.model import Memory, Source

#: Sources whose memories are merged (a notes chunk's identity is its file; session records expire by themselves).
MERGEABLE = frozenset({Source.MANUAL, Source.AGENT_END, Source.IMPORT, Source.INJECTED})


@dataclass
class Cluster:
    """A survivor and the memories that repeat it, with the rule that matched each."""

    survivor: Memory
    merged: list[Memory] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        kinds = sorted(set(self.rules))
        what = " and ".join("the same text" if k == EXACT else "the same learning in other words" for k in kinds)
        return f"near duplicates merged into {self.survivor.id}: {what} ({', '.join(kinds)})"


def preference(memory: Memory) -> tuple[float, ...]:
    """The order survivors are chosen in: most drawn on, most shown, most confident, oldest."""
    return (-memory.used_count, -memory.usage_count, -memory.confidence, memory.created_at.timestamp())


def find_clusters(memories: Sequence[Memory], *, vectors: Callable[[list[str]], np.ndarray] | None = None,
                  rows: Mapping[str, np.ndarray] | None = None, most: int | None = None) -> tuple[list[Cluster], int]:
    """The clusters of near duplicates among ``memories`` (current ones of one scope), per project, and how many
    duplicates were left for a later run (beyond ``most`` merged memories). ``vectors`` embeds texts (semantic
    near duplicates; None: lexical rules only), ``rows`` are stored vectors by memory id (embedded otherwise)."""
    candidates = sorted((m for m in memories if m.source in MERGEABLE), key=preference)
    rows = dict(rows or {})
    if vectors is not None:
        missing = [m for m in candidates if m.id not in rows]
        for start in range(0, len(missing), 256):
            batch = missing[start:start + 256]
            for memory, row in zip(batch, np.asarray(vectors([m.content for m in batch]), dtype=np.float32)):
                rows[memory.id] = row
    gates: dict[str, Gate] = {}
    clusters: dict[str, Cluster] = {}
    merged, left = 0, 0
    for memory in candidates:
        gate = gates.get(memory.project)
        if gate is None:
            gate = gates[memory.project] = Gate(vectors=vectors)
        row = rows.get(memory.id) if vectors is not None else None
        verdict = gate.duplicate_of(memory.content, row)
        if verdict is None or verdict.match is None:
            gate.add(memory.id, memory.content, row)
            clusters[memory.id] = Cluster(memory)
            continue
        if most is not None and merged >= most:
            left += 1
            continue
        cluster = clusters[verdict.match]
        cluster.merged.append(memory)
        cluster.rules.append(verdict.reason or "near-duplicate")
        merged += 1
    return [c for c in clusters.values() if c.merged], left


def merged_state(cluster: Cluster) -> Memory:
    """The survivor once it has absorbed its cluster: the summed usage and uses, the union of the tags (at most
    32, its own first), the highest confidence, the latest use. Its content, type and version stay."""
    survivor = cluster.survivor
    everyone = [survivor, *cluster.merged]
    tags = list(survivor.tags)
    for memory in cluster.merged:
        tags += [t for t in memory.tags if t not in tags]
    return survivor.model_copy(update={
        "usage_count": sum(m.usage_count for m in everyone),
        "used_count": sum(m.used_count for m in everyone),
        "tags": tuple(sorted(tags[:32])),
        "confidence": max(m.confidence for m in everyone),
        "last_used_at": max(m.last_used_at for m in everyone),
    })


__all__ = ["Cluster", "MERGEABLE", "find_clusters", "merged_state", "preference"]
