"""A team's memory, kept by its lead's extractor (docs/consolidation.md, "Team memory").

At the end of a round (``cortex team round-end T``, its HTTP and MCP calls, or the lead's Stop hook) the round's
task outcomes and the members' new learnings are distilled into the team's graph as entries tagged
``team-memory`` and one of ``decision``, ``lesson``, ``member``, ``context``. The model may say an entry updates
an existing one (it supersedes it); the quality gate turns a repeat into a confirmation; over the bound (default
200 current entries) the least valuable entries are evicted (retired: valid until the round, kept in history).
Members read the team memory; only the extractor, acting for the lead, writes it. A temporary team (declared
with a parent) reads its parent team's memory and has no extractor.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from cortex.capture.gate import features
from cortex.capture.instructions import READ, READ_KEY, instruction_reason
from cortex.errors import LLMOutputError
from cortex.llm import LLMClient
from cortex.llm.prompts import team as prompt
from cortex.llm.prompts.team import MAX_ROUND_ITEMS, SYSTEM, category_of, round_text
from cortex.model import Memory, MemoryType
from cortex.scopes import TEAM_MEMORY_TAG

#: Each entry's category (a tag of it too) and its memory type.
CATEGORIES = {"decision": MemoryType.DECISION, "lesson": MemoryType.PATTERN, "member": MemoryType.INSIGHT,
              "context": MemoryType.INSIGHT}
assert tuple(CATEGORIES) == prompt.CATEGORIES


class Entry(BaseModel):
    """One team memory entry as the model gives it; ``replaces`` names the existing entry it updates."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    category: str = Field(pattern="^(decision|lesson|member|context)$")
    content: str = Field(min_length=1, max_length=2000)
    replaces: str | None = Field(default=None, max_length=64)


class TeamMemory(BaseModel):
    """What the model answers: the round's entries (none is a fine answer)."""

    model_config = ConfigDict(extra="forbid")
    entries: list[Entry]


def extract(client: LLMClient, text: str, existing_ids: set[str], most: int) -> tuple[list[Entry], int]:
    """The model's entries for the round, checked and merged (:func:`merged`), and how many duplicates were merged
    away: an entry that replaces an id not in the team memory makes the whole answer unusable
    (:class:`LLMOutputError`: nothing changes)."""
    system, user = prompt.messages(text, most)
    answer = client.complete_json(system, user, TeamMemory, "team_memory")
    for entry in answer.entries:
        if entry.replaces is not None and entry.replaces not in existing_ids:
            raise LLMOutputError(f"the model's entry replaces {entry.replaces!r}, which is not an entry of the "
                                 f"team memory: its answer is not used")
    kept, dropped = merged(answer.entries)
    return kept[:most], dropped


def _key(content: str) -> str:
    return " ".join(content.casefold().split()).rstrip(".!;: ")


def merged(entries: Sequence[Entry]) -> tuple[list[Entry], int]:
    """``entries`` with what a model's answer repeats merged: an entry whose text (case, spacing and final
    punctuation aside) an earlier one has is dropped; a second entry replacing the same existing entry is kept
    as a new entry (the first one replaces it: an entry is superseded once). Returns the entries and how many
    were dropped."""
    seen: set[str] = set()
    replaced: set[str] = set()
    kept: list[Entry] = []
    for entry in entries:
        key = _key(entry.content)
        if key in seen:
            continue
        seen.add(key)
        if entry.replaces is not None and entry.replaces in replaced:
            entry = entry.model_copy(update={"replaces": None})
        elif entry.replaces is not None:
            replaced.add(entry.replaces)
        kept.append(entry)
    return kept, len(entries) - len(kept)


#: Of an entry's content words, the share one member text of the round must hold for the entry to rest on it.
MIN_SUPPORT = 0.5
#: Words an entry may add to what it rests on without changing what it says ("the team decided to ...").
_FRAMING = frozenset(features("team decided decision agreed lesson learned member owns context uses use").content)


def held_reason(content: str, round_items: Sequence[Memory]) -> str | None:
    """Why an entry the extractor proposes is held for review instead of written (docs/consolidation.md, "Held
    for review"), or None: it reads as an instruction to agents; or no member text of the round (``round_items``:
    the task outcomes and learnings it was shown) supports it (holds at least :data:`MIN_SUPPORT` of its
    content words); or what supports it most reads as an instruction to agents, or is a learning a model took from
    text the member read (a tool output, a file, another agent's answer) rather than wrote."""
    reason = instruction_reason(content)
    if reason is not None:
        return f"the entry {reason}"
    words = features(content).content - _FRAMING
    if not words:
        return None
    shares = [(len(words & features(m.content).content) / len(words), m) for m in round_items]
    support = [(share, m) for share, m in shares if share >= MIN_SUPPORT]
    if not support:
        return "no member learning or task outcome of the round supports it"
    # what it rests on is the text that holds the most of it: held, unless a clean text holds as much
    steering = [(share, m, reason) for share, m in support if (reason := _steers(m)) is not None]
    clean = max((share for share, m in support if _steers(m) is None), default=0.0)
    best = max(steering, key=lambda found: found[0], default=None)
    if best is not None and best[0] > clean:
        share, memory, reason = best
        return f"it rests on a text of {memory.author or memory.agent} ({memory.id}) that {reason}"
    return None


def _steers(memory: Memory) -> str | None:
    """Why a member text must not steer the team memory unreviewed (what it says it does), or None."""
    reason = instruction_reason(memory.content)
    if reason is not None:
        return reason
    if (memory.metadata or {}).get(READ_KEY) == READ:
        return "a model took from text the member read, not wrote (a tool output, a file, another agent's answer)"
    return None


def eviction_order(entries: Sequence[Memory], now: datetime) -> list[Memory]:
    """The entries least worth keeping first: least drawn on and shown, least confident, oldest."""
    return sorted(entries, key=lambda m: (m.used_count, m.usage_count, m.confidence,
                                          (m.validated_at or m.updated_at or m.created_at), m.id))


__all__ = ["CATEGORIES", "Entry", "MAX_ROUND_ITEMS", "MIN_SUPPORT", "SYSTEM", "TEAM_MEMORY_TAG", "TeamMemory",
           "category_of", "eviction_order", "extract", "held_reason", "merged", "round_text"]
