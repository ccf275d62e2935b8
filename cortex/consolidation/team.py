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

import json
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from cortex.errors import LLMOutputError
from cortex.llm import LLMClient
from cortex.model import Memory, MemoryType
from cortex.scopes import TEAM_MEMORY_TAG

#: Each entry's category (a tag of it too) and its memory type.
CATEGORIES = {"decision": MemoryType.DECISION, "lesson": MemoryType.PATTERN, "member": MemoryType.INSIGHT,
              "context": MemoryType.INSIGHT}
#: Round input shown to the model, at most (the newest first).
MAX_ROUND_ITEMS = 300


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


SYSTEM = """You are the extractor of a team of AI coding agents, acting for its lead at the end of a round.
You get the team memory as it is (entries with ids) and what happened in the round: the members' task outcomes
and the learnings they recorded. Write the entries the team memory should gain, each in one category:
decision (what the team decided, and why), lesson (what worked or failed, to repeat or avoid), member (who knows
or owns what, who is good at what), context (facts about the project the whole team needs).
When a new entry updates or corrects an existing one, give that entry's id in "replaces". Do not repeat what
the team memory already says. At most {most} entries; an empty list when the round taught nothing durable.
Answer with JSON only: {"entries": [{"category": "decision|lesson|member|context", "content": "...",
"replaces": null}]}"""


def round_text(existing: Sequence[Memory], outcomes: Sequence[Memory], learnings: Sequence[Memory],
               budget_chars: int) -> str:
    """What the model is shown: the team memory, then the round, newest first, within ``budget_chars``."""
    head = ["The team memory now (one JSON object per line):"]
    head += [json.dumps({"id": m.id, "category": category_of(m), "content": m.content[:500]}, ensure_ascii=False)
             for m in existing] or ["(empty)"]
    body = ["", "The round:"]
    items = sorted([*outcomes, *learnings], key=lambda m: m.created_at, reverse=True)[:MAX_ROUND_ITEMS]
    for memory in items:
        kind = "task outcome" if memory.source.value == "task_completion" else "learning"
        body.append(f"- {kind} of {memory.author or memory.agent}: {memory.content[:1500]}")
    text = "\n".join(head + body)
    return text[:budget_chars]


def category_of(memory: Memory) -> str:
    return next((t for t in memory.tags if t in CATEGORIES), "context")


def extract(client: LLMClient, text: str, existing_ids: set[str], most: int) -> list[Entry]:
    """The model's entries for the round, checked: an entry that replaces an id not in the team memory makes the
    whole answer unusable (:class:`LLMOutputError`: nothing changes)."""
    answer = client.complete_json(SYSTEM.replace("{most}", str(most)), text, TeamMemory, "team_memory")
    replaced: set[str] = set()
    for entry in answer.entries:
        if entry.replaces is not None:
            if entry.replaces not in existing_ids:
                raise LLMOutputError(f"the model's entry replaces {entry.replaces!r}, which is not an entry of the "
                                     f"team memory: its answer is not used")
            if entry.replaces in replaced:
                raise LLMOutputError(f"the model replaces {entry.replaces!r} twice: its answer is not used")
            replaced.add(entry.replaces)
    return answer.entries[:most]


def eviction_order(entries: Sequence[Memory], now: datetime) -> list[Memory]:
    """The entries least worth keeping first: least drawn on and shown, least confident, oldest."""
    return sorted(entries, key=lambda m: (m.used_count, m.usage_count, m.confidence,
                                          (m.validated_at or m.updated_at or m.created_at), m.id))


__all__ = ["CATEGORIES", "Entry", "SYSTEM", "TEAM_MEMORY_TAG", "TeamMemory", "category_of", "eviction_order",
           "extract", "round_text"]
