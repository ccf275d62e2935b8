"""Contradictions among a scope's current memories (docs/consolidation.md, "Contradictions").

Candidates are pairs that talk about the same thing (much of their content words in common, or close vectors)
but cannot be duplicates: a number, path or flag differs, one is negated, one says the opposite. The language
model judges them (a bounded number per run) and names, for each pair that contradicts, the memory to keep (the
newer one, unless the older is better supported) and why. An answer naming a memory that was not asked about is
refused whole: nothing changes, and the pairs are asked again by a later run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from cortex.capture.gate import differs, features, jaccard, swaps
from cortex.consolidation.duplicates import MERGEABLE
from cortex.errors import LLMOutputError
from cortex.llm import LLMClient
from cortex.llm.prompts import contradictions as prompt
from cortex.llm.prompts.contradictions import SYSTEM
from cortex.model import Memory

#: Content words two memories share, at least (Jaccard), to be asked about.
MIN_OVERLAP = 0.34
#: Terms in more memories than this are not used to find pairs (they pair everything with everything).
MAX_POSTING = 400


class Proposal(BaseModel):
    """One contradiction as the model names it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    keep: str = Field(min_length=1, max_length=64)
    supersede: str = Field(min_length=1, max_length=64)
    reason: str = Field(min_length=1, max_length=500)


class Contradictions(BaseModel):
    """What the model answers: the pairs that contradict (none is a fine answer)."""

    model_config = ConfigDict(extra="forbid")
    contradictions: list[Proposal]


@dataclass(frozen=True)
class Pair:
    """Two memories asked about: ``a`` the older."""

    a: Memory
    b: Memory
    overlap: float

    @property
    def key(self) -> str:
        """The pair as the run records it (with versions: a changed memory is asked about again)."""
        first, second = sorted([f"{self.a.id}@{self.a.version}", f"{self.b.id}@{self.b.version}"])
        return f"{first} {second}"


def candidate_pairs(memories: Sequence[Memory], *, checked: Collection[str] = (), most: int = 20) -> list[Pair]:
    """The pairs worth asking about, most alike first, at most ``most``; pairs in ``checked`` (asked by an earlier
    run, unchanged since) are left out."""
    pool = [m for m in memories if m.source in MERGEABLE]
    analysed = [features(m.content) for m in pool]
    postings: defaultdict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(analysed):
        for term in f.content:
            postings[term].append(i)
    pairs: list[Pair] = []
    for i, f in enumerate(analysed):
        shared: defaultdict[int, int] = defaultdict(int)
        for term in f.content:
            hits = postings[term]
            if len(hits) > MAX_POSTING:
                continue
            for j in hits:
                if j < i:
                    shared[j] += 1
        for j, common in shared.items():
            if common < 2 or pool[i].project != pool[j].project:
                continue
            overlap = jaccard(f.content, analysed[j].content)
            if overlap < MIN_OVERLAP:
                continue
            if not (differs(f, analysed[j]) or differs(analysed[j], f) or swaps(f, analysed[j])):
                continue  # the same learning: a merge's business, not a contradiction
            a, b = sorted((pool[i], pool[j]), key=lambda m: (m.created_at, m.id))
            pair = Pair(a, b, overlap)
            if pair.key not in checked:
                pairs.append(pair)
    pairs.sort(key=lambda p: (-p.overlap, p.a.id, p.b.id))
    return pairs[:most]


def judge(client: LLMClient, pairs: Sequence[Pair]) -> list[Proposal]:
    """The model's proposals for ``pairs``, checked: each names the two memories of one pair asked about.
    Raises :class:`LLMOutputError` (nothing of the answer is used) for one that does not, and what
    :meth:`LLMClient.complete_json` raises."""
    if not pairs:
        return []
    system, user = prompt.messages([(p.a, p.b) for p in pairs])
    answer = client.complete_json(system, user, Contradictions, "contradictions")
    asked = {frozenset((p.a.id, p.b.id)) for p in pairs}
    seen: set[str] = set()
    for proposal in answer.contradictions:
        if proposal.keep == proposal.supersede or frozenset((proposal.keep, proposal.supersede)) not in asked:
            raise LLMOutputError(f"the model proposed superseding {proposal.supersede!r} by {proposal.keep!r}, "
                                 f"which is not a pair it was asked about: its answer is not used")
        if proposal.supersede in seen:
            raise LLMOutputError(f"the model proposed superseding {proposal.supersede!r} twice: its answer is not used")
        seen.add(proposal.supersede)
    kept = {p.keep for p in answer.contradictions}
    if kept & seen:
        raise LLMOutputError("the model proposed keeping a memory it also supersedes: its answer is not used")
    return list(answer.contradictions)


__all__ = ["Contradictions", "Pair", "Proposal", "SYSTEM", "candidate_pairs", "judge"]
